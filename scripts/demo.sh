#!/usr/bin/env bash
# A real transfer on the CPU: resnet18 trained on generated task A, then fine-tuned from it on task B;
# prints progress and serves a live dashboard of both runs on 127.0.0.1 (the URL, with its token, is
# printed; open it in a browser): `npm run demo [-- --steps-every N --keep --port N --no-dashboard
# --dir D]`. In a terminal the dashboard stays up after the runs until Ctrl+C.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm install
bash scripts/setup-python.sh
npm run --silent build
exec node dist/cli.js demo "$@"
