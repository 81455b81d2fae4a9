#!/usr/bin/env bash
# Creates .venv (Python 3.11) with MindSpore's CPU build, Pillow, numpy and pytest.
# Idempotent: a venv whose pinned packages are already present is left alone; pip's cache is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
VENV=.venv
REQ=runner/requirements.txt
STAMP="$VENV/.requirements.sha256"
want=$(sha256sum "$REQ" runner/pyproject.toml | sha256sum | cut -d' ' -f1)

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
  || { echo "setup: .venv must be Python 3.11" >&2; exit 1; }

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  echo "setup: .venv is up to date"
  exit 0
fi
"$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$REQ"
"$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps -e runner
echo "$want" > "$STAMP"
"$VENV/bin/python" -c 'import mindspore, PIL, numpy; print("setup: mindspore", mindspore.__version__, "pillow", PIL.__version__, "numpy", numpy.__version__)'
