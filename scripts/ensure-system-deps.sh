#!/usr/bin/env bash
# Install the system tools the benchmark agent drives (fio, dd, losetup, mkfs.*, mdadm, blkid), and
# the headless browser the report's browser tests open (chromium, chromedriver), and debootstrap (the
# Debian root the document is tested in), and nftables (the fence of local instances), and what local
# File Gateway shares stand on (nfs-ganesha with its VFS backend: the NFS server; libnfs and libfuse3
# headers and static libraries: the local instance's user-space NFS client, native/nfs-client), through
# apt when they are missing and we are root; otherwise say exactly what is missing.
set -euo pipefail

declare -A package_of=(
  [fio]=fio [mdadm]=mdadm [mkfs.xfs]=xfsprogs [mkfs.btrfs]=btrfs-progs [mkfs.ext4]=e2fsprogs
  [losetup]=mount [blkid]=util-linux [dd]=coreutils
  [chromium]=chromium [chromedriver]=chromium-driver
  [debootstrap]=debootstrap  # the Debian 12 root the document is tested in (tests/integration/images)
  [nft]=nftables  # the fence of local instances (local/storagebench_local/fence.py)
)
# packages without a command of their own to look for: asked of dpkg
libraries=(nfs-ganesha-vfs libnfs-dev libfuse3-dev pkg-config gcc)
package_of[ganesha.nfsd]=nfs-ganesha  # the local File Gateway's NFS server (local/storagebench_local/nfs_server.py)
missing=()
for tool in "${!package_of[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || [ -x "/sbin/$tool" ] || missing+=("${package_of[$tool]}")
done
for package in "${libraries[@]}"; do
  dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q 'ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
packages=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing system packages: $packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $packages >/dev/null
else
  echo "missing system packages: $packages" >&2
  echo "install them (apt-get install $packages) as root; tests that need them are skipped with this reason" >&2
fi
