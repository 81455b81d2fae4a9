#!/usr/bin/env bash
# Creates .venv (Python 3.11) with MindSpore's CPU build, Pillow, numpy and pytest, plus `onnx` and
# `onnxruntime`, which the checkpoint tests use to check and run exported ONNX files (the runner itself
# does not need them), and the lint tools of runner/requirements-dev.txt (ruff, mypy:
# scripts/lint-python.sh). It also runs scripts/setup-ref-venv.sh (the test-only .venv-ref with torch).
# Idempotent: a venv whose pinned packages are already present is left alone; pip's cache is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
VENV=.venv
REQ=runner/requirements.txt
DEV=runner/requirements-dev.txt
STAMP="$VENV/.requirements.sha256"
# Test-only, so not in REQ. All have cp311 wheels and accept numpy 1.x (MindSpore 2.10 needs numpy<2);
# onnxruntime is a 13 MB wheel (about 21 MB with sympy and its other dependencies). mindcv is a runner
# dependency now (runner/requirements.txt: the mindcv backbones). psycopg (3, with its binary wheel: libpq
# inside, nothing to compile) is the PostgreSQL driver of the shared-study sweep test
# (test/runner/sweep/test_sweep_postgres.py); the runner needs a driver only when a sweep's storage names one.
EXTRA=(onnx==1.17.0 onnxruntime==1.20.1 "psycopg[binary]==3.3.9")
want=$( (sha256sum "$REQ" "$DEV" runner/pyproject.toml; echo "${EXTRA[*]}") | sha256sum | cut -d' ' -f1)

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
  || { echo "setup: .venv must be Python 3.11" >&2; exit 1; }

# The test-only reference venv (torch, torchvision, timm) the PyTorch weight mapping is checked against.
bash scripts/setup-ref-venv.sh

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  echo "setup: .venv is up to date"
  exit 0
fi
"$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$REQ" -r "$DEV" "${EXTRA[@]}"
"$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps -e runner
echo "$want" > "$STAMP"
"$VENV/bin/python" -c 'import mindspore, PIL, numpy, onnx, onnxruntime, psycopg; print("setup: mindspore", mindspore.__version__, "pillow", PIL.__version__, "numpy", numpy.__version__, "onnx", onnx.__version__, "onnxruntime", onnxruntime.__version__, "psycopg", psycopg.__version__)'
