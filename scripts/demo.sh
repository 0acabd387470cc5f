#!/usr/bin/env bash
# The local demo: every config of events/local-demo.json on emulated EBS volumes.
set -euo pipefail
suite=events/local-demo.json
if [ "$(id -u)" -ne 0 ]; then
  echo "the demo emulates EBS volumes with loop devices and cgroup throttling: run it as root" >&2
  exit 1
fi
stamp=$(date -u +%Y%m%dT%H%M%SZ)
for config in $(.venv/bin/python -c "import json; print(' '.join(c['id'] for c in json.load(open('$suite'))['configs']))"); do
  echo "== $config"
  .venv/bin/storagebench agent --suite "$suite" --config "$config" --out ".storagebench/demo/$stamp/$config"
done
