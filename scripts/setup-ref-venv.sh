#!/usr/bin/env bash
# Creates .venv-ref: a test-only Python 3.11 venv with the reference implementations the runner's
# PyTorch weight mapping is checked against (test/runner/models/test_torch_weights.py): torch,
# torchvision, timm and safetensors. The runner never imports these; its own venv (.venv) stays free
# of torch. torch from the package index is a CUDA build on Linux x86_64 (it needs its nvidia-*
# dependencies to import, but runs on CPU): about 2 minutes and 5.5 GB the first time, pip's cache
# keeps the wheels for the next.
# Idempotent: a venv whose stamp matches the pinned list is left alone.
# ASCEND_FT_SKIP_REF_VENV=1 skips it (the tests that need it then skip with one reason).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${ASCEND_FT_SKIP_REF_VENV:-}" = 1 ]; then
  echo "setup-ref: skipped (ASCEND_FT_SKIP_REF_VENV=1)"
  exit 0
fi
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
VENV=.venv-ref
PINS=(torch==2.15.0 torchvision==0.29.2 timm==1.0.31 safetensors==0.7.0 "numpy<2")
STAMP="$VENV/.ref-requirements"
want="${PINS[*]}"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  echo "setup-ref: .venv-ref is up to date"
  exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
  echo '*' > "$VENV/.gitignore"   # keep the 5.5 GB venv out of git status
fi
"$VENV/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
  || { echo "setup-ref: .venv-ref must be Python 3.11" >&2; exit 1; }
"$VENV/bin/python" -m pip install --disable-pip-version-check -q "${PINS[@]}"
"$VENV/bin/python" -c 'import torch, torchvision, timm, safetensors, numpy; print("setup-ref: torch", torch.__version__, "torchvision", torchvision.__version__, "timm", timm.__version__, "safetensors", safetensors.__version__, "numpy", numpy.__version__)'
echo "$want" > "$STAMP"
