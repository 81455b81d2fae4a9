#!/usr/bin/env bash
# Lints the Python side: ruff (lint rules and formatting) over runner/, test/runner/ and bench/*.py,
# mypy over the runner package, and the runner's import graph (no cycles). Each tool prints its own
# summary; the script runs all of them and exits non-zero if any failed.
# Config: runner/pyproject.toml ([tool.ruff], [tool.mypy]); versions: runner/requirements-dev.txt
# (scripts/setup-python.sh installs them into .venv).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
CONFIG=runner/pyproject.toml
TARGETS=(runner test/runner bench/*.py)
failed=()

step() {
  local name=$1; shift
  echo "== $name"
  "$@" || failed+=("$name")
}

step "ruff check" "$PY" -m ruff check --config "$CONFIG" "${TARGETS[@]}"
step "ruff format --check" "$PY" -m ruff format --config "$CONFIG" --check "${TARGETS[@]}"
# mypy reads [tool.mypy] from the pyproject.toml in its working directory (files = ascend_finetune).
step "mypy" bash -c "cd runner && ../$PY -m mypy"
step "import cycles" "$PY" scripts/check-python-imports.py

if [ ${#failed[@]} -gt 0 ]; then
  echo "lint-python: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "lint-python: all passed"
