#!/usr/bin/env bash
# Loop against sink on an Ascend box: run from the repository root after scripts/setup-python.sh.
#   bash bench/ascend_ab.sh [--sink-size 8] [--steps 64] [--batch 32] [--image-size 224] [--backbone resnet50] [--data DIR]
# Sources CANN's set_env.sh when ASCEND_HOME_PATH is not set, then runs bench/sink_ab.py on the
# Ascend target. The last line it prints starts with "ascend_ab:": paste it into the issue.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${ASCEND_HOME_PATH:-}" ]; then
  for f in /usr/local/Ascend/ascend-toolkit/set_env.sh /usr/local/Ascend/cann/set_env.sh; do
    # shellcheck disable=SC1090
    if [ -f "$f" ]; then set +u; source "$f"; set -u; break; fi
  done
fi
command -v npu-smi >/dev/null && npu-smi info | head -n 8 || echo "ascend_ab: npu-smi not found (no NPU driver?)" >&2
exec .venv/bin/python bench/sink_ab.py --target Ascend "$@"
