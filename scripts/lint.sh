#!/usr/bin/env bash
# The lint tier (fast, so `npm test` runs it first): ESLint with type-aware and layer rules, Prettier's
# check, and the runner's Python lint (ruff, mypy, the import-cycle check) when its script exists.
# Each tool prints its own summary; exits non-zero if any failed. `npm run format` fixes formatting.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
echo "-- eslint"
npx --no-install eslint --max-warnings 0 . && echo "eslint: no problems" || status=1
echo "-- prettier"
npx --no-install prettier --check --log-level warn . && echo "prettier: all files formatted" || status=1
if [ -f scripts/lint-python.sh ]; then
  echo "-- python"
  bash scripts/lint-python.sh || status=1
fi
exit $status
