#!/usr/bin/env bash
# Print the path of a working Python interpreter of the given minor version (e.g. 3.13):
# pyenv's installed versions first (its shims fail unless that version is active), then PATH.
# Exit 1 with nothing printed when there is none.
set -euo pipefail
version="$1"
root="${PYENV_ROOT:-$HOME/.pyenv}"
candidates=$(ls -d "$root"/versions/"$version".*/bin/python 2>/dev/null | sort -V -r || true)
candidates="$candidates $(command -v "python$version" 2>/dev/null || true)"
for candidate in $candidates; do
  if "$candidate" -c "import sys; sys.exit(0 if sys.version.startswith('$version.') else 1)" 2>/dev/null; then
    echo "$candidate"
    exit 0
  fi
done
exit 1
