#!/usr/bin/env bash
# Runs every test tier, even after one fails, and exits non-zero if any failed.
# Tiers: lint, typecheck, TS unit tests (node:test), integration tests (real runner, real sshd), runner
# tests (pytest), browser tests (dashboard in Chromium), e2e tests (the .vsix in code-server).
# It sets up what its tiers need, as .ci/run does: node_modules, sshd, the Python venv, Debian's chromium
# and code-server (cached under ~/.cache/ascend-finetune). Where it cannot (no root for apt), it skips the
# browser and e2e tiers with one line saying what to install.
set -uo pipefail
cd "$(dirname "$0")/.."

# A fresh clone has no node_modules yet, nor maybe an sshd: `npm test` alone must be enough.
[ -d node_modules ] || npm ci --no-audit --no-fund
bash scripts/ensure-sshd.sh

failed=()
# Free space in the clone and the temp folder, with each tier (scripts/free-space.sh says why).
free_space() { bash scripts/free-space.sh; }
tier() {
  local name=$1
  shift
  echo "== $name (free: $(free_space))"
  if "$@"; then echo "== $name: passed"; else echo "== $name: FAILED"; failed+=("$name"); fi
}

tier "python setup" bash scripts/setup-python.sh

# Chromium (browser and e2e tiers) and code-server (e2e): installed and cached; exit 3 means no root.
ui_tiers=yes
echo "== browser and e2e set-up"
install_log=$(mktemp)
bash scripts/install-code-server.sh >"$install_log" 2>&1
case $? in
  0) echo "== browser and e2e set-up: passed" ;;
  3) ui_tiers=no; echo "== browser and e2e tiers: SKIPPED: $(tail -1 "$install_log")" ;;
  *) ui_tiers=no; cat "$install_log"; echo "== browser and e2e set-up: FAILED"; failed+=("browser and e2e set-up") ;;
esac
rm -f "$install_log"

tier lint bash scripts/lint.sh
tier typecheck npm run --silent typecheck

# Node 20's --test takes no globs (that came in Node 21), so the files are listed here.
mapfile -t unit_files < <(find test/unit -name '*.test.ts' -type f | sort)
tier "unit tests" node --import tsx --test --test-reporter=spec "${unit_files[@]}"

# Real training runs, launched and followed through src/core, locally and over a loopback sshd.
mapfile -t integration_files < <(find test/integration -name '*.test.ts' -type f | sort)
tier "integration tests" node --import tsx --test --test-reporter=spec "${integration_files[@]}"

# A whole pass writes ~17 GB of runs and checkpoints under pytest's temp root; keeping only the folders
# of failed tests (and one past session), and removing a module's fixture folders when it ends
# (test/runner/conftest.py), keeps a CI disk from filling.
# The twelve slowest tests are listed: the tier is the bulk of CI's time.
tier "runner tests" .venv/bin/python -m pytest test/runner -q \
  -o tmp_path_retention_policy=failed -o tmp_path_retention_count=1 --durations=12

# The dashboard UI in a real Chromium (playwright-core + Debian chromium), against real runs.
if [ "$ui_tiers" = yes ]; then
  mapfile -t browser_files < <(find test/browser -name '*.test.ts' -type f | sort)
  [ ${#browser_files[@]} -gt 0 ] && tier "browser tests" node --import tsx --test --test-reporter=spec "${browser_files[@]}"
fi

# Last: the packaged .vsix inside a real VS Code (code-server), driven through its UI.
if [ "$ui_tiers" = yes ]; then
  mapfile -t e2e_files < <(find test/e2e -name '*.test.ts' -type f | sort)
  [ ${#e2e_files[@]} -gt 0 ] && tier "e2e tests" node --import tsx --test --test-reporter=spec --test-concurrency=1 "${e2e_files[@]}"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]} (free: $(free_space))"
  exit 1
fi
echo "all tiers passed (free: $(free_space))"
