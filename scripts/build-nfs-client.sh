#!/usr/bin/env bash
# Build the local instances' NFS client (native/nfs-client: libnfs over FUSE, installed as the
# instance's mount.nfs) into $1, static so that it runs inside a local instance's Debian root, and
# beside it (../lib) the preload that lets the local File Gateway's nfs-ganesha run without rpcbind.
# Without the headers (make setup installs libnfs-dev and libfuse3-dev), say so and build nothing:
# local mode then refuses NFS targets, naming what is missing.
set -euo pipefail
out=${1:?usage: build-nfs-client.sh OUTPUT}
root=$(cd "$(dirname "$0")/.." && pwd)
if ! pkg-config --exists fuse3 libnfs 2>/dev/null; then
  echo "libnfs-dev or libfuse3-dev is missing: local File Gateway shares cannot be mounted (apt-get install libnfs-dev libfuse3-dev pkg-config)" >&2
  exit 0
fi
mkdir -p "$(dirname "$out")"
# glibc warns that a static getaddrinfo needs its shared NSS modules: only numeric addresses are looked up
# shellcheck disable=SC2046
gcc -O2 -Wall -Wextra -Werror -Wno-unused-parameter -static -o "$out.partial" \
  "$root/native/nfs-client/mount_nfs.c" $(pkg-config --cflags fuse3) -lfuse3 -lnfs -lpthread -ldl -lrt \
  2> >(grep -v -e 'statically linked applications requires' -e 'in function' >&2)
mv "$out.partial" "$out"
lib="$(dirname "$out")/../lib/storagebench-ganesha-no-portmap.so"
mkdir -p "$(dirname "$lib")"
gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$lib" "$root/native/nfs-client/no_portmap.c"
echo "built $out and $lib"
