#!/usr/bin/env bash
# Runs the e2e suite N times in a row (default 10), as scripts/test.sh runs it, and prints a tally
# with each run's time. Logs: test-output/e2e/repeat/run-N.log (screenshots of the last run stay in
# test-output/e2e/<test>/).   Usage: bash test/e2e/repeat.sh [N]
set -uo pipefail
cd "$(dirname "$0")/../.."
n=${1:-10}
out=test-output/e2e/repeat
rm -rf "$out"
mkdir -p "$out"
mapfile -t files < <(find test/e2e -name '*.test.ts' -type f | sort)
passed=0
streak=0
longest=0
for i in $(seq 1 "$n"); do
  start=$(date +%s)
  if node --import tsx --test --test-reporter=spec --test-concurrency=1 "${files[@]}" >"$out/run-$i.log" 2>&1; then
    result=pass
    passed=$((passed + 1))
    streak=$((streak + 1))
    [ "$streak" -gt "$longest" ] && longest=$streak
  else
    result=FAIL
    streak=0
    cp -r test-output/e2e/local "$out/run-$i-local" 2>/dev/null
    cp -r test-output/e2e/ssh "$out/run-$i-ssh" 2>/dev/null
    cp -r test-output/e2e/checkpoints "$out/run-$i-checkpoints" 2>/dev/null
    cp -r test-output/e2e/nodes "$out/run-$i-nodes" 2>/dev/null
    cp -r test-output/e2e/spec-files "$out/run-$i-spec-files" 2>/dev/null
  fi
  echo "run $i: $result in $(($(date +%s) - start)) s ($(date -u +%H:%M:%S))" | tee -a "$out/tally.txt"
done
echo "passed $passed of $n; longest run of consecutive passes: $longest" | tee -a "$out/tally.txt"
[ "$passed" = "$n" ]
