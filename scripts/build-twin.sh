#!/usr/bin/env bash
# Build the EBS twin's compiled data path (native/twin) into $1, static so that a local instance
# chrooted into another distribution's root runs it too. Without cargo, say so and build nothing:
# twins then run on the Python data path, labelled in every manifest (python_twin_reason).
set -euo pipefail
out=${1:?usage: build-twin.sh OUTPUT}
root=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is missing: EBS twins will run on the Python data path (install Rust with rustup for the compiled one)" >&2
  exit 0
fi
target_dir="$root/.cache/twin-target"
RUSTFLAGS="-C target-feature=+crt-static" cargo build --quiet --release --locked \
  --manifest-path "$root/native/twin/Cargo.toml" --target-dir "$target_dir"
install -D -m 0755 "$target_dir/release/storagebench-twin" "$out"
echo "built $out"
