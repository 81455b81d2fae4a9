#!/usr/bin/env bash
# Trains a small model on generated images on the CPU, prints its progress, and serves a live
# dashboard of the run on 127.0.0.1 (the URL, with its token, is printed; open it in a browser):
# `npm run demo [-- --steps-every N --keep --port N --no-dashboard]`. In a terminal the dashboard
# stays up after the run until Ctrl+C.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm install
bash scripts/setup-python.sh
npm run --silent build
exec node dist/cli.js demo "$@"
