#!/usr/bin/env bash
# Trains a small model on generated images on the CPU and prints its progress: `npm run demo [-- --steps-every N --keep]`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm install
bash scripts/setup-python.sh
npm run --silent build
exec node dist/cli.js demo "$@"
