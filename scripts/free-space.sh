#!/usr/bin/env bash
# Prints the free space where the tests write, the clone (the current folder) and the temp folder:
# "clone 61G, temp 61G", with "?" where df cannot tell. .ci/run prints it first and scripts/test.sh
# with each tier, since a full disk fails tests far from its cause (as it once did on CI).
out=()
for where in "$PWD" "${TMPDIR:-/tmp}"; do
  out+=("$(df -Ph "$where" 2>/dev/null | awk 'NR == 2 { print $4 }')")
done
echo "clone ${out[0]:-?}, temp ${out[1]:-?}"
