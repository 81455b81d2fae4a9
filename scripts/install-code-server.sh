#!/usr/bin/env bash
# Installs what the end-to-end tests need: code-server (a full VS Code, server + web workbench) into
# .e2e/code-server/, and Debian's chromium for playwright-core to drive. Idempotent: a second run with
# the same code-server and Node versions only checks and exits. Recipe and its four pitfalls:
# docs/e2e.md (a plain `npm install code-server` fails here).
#
# Where the time goes (measured on 2 cores): apt (chromium and its libraries, about 1 to 2 min cold);
# npm's download of code-server (a few seconds); the native modules of code-server's dependencies
# compiled by node-gyp (kerberos, node-pty, @parcel/watcher, ...), most of the npm step. So the
# install lives outside the clone, in ~/.cache/ascend-finetune/code-server-<key>/ keyed on the stamp
# below (code-server version + Node version + architecture), and .e2e/code-server is a link to it:
# a second clone or CI run on the same machine only links it and checks it starts.
#
# Usage: bash scripts/install-code-server.sh
# Exit 3 (nothing changed) when Debian packages are missing and this user can neither be root nor sudo
# without a password: `npm test` then skips the browser and e2e tiers with that one line.
# Env: CODE_SERVER_VERSION (default 4.99.4), ASCEND_FINETUNE_E2E_CACHE (default
#      ${XDG_CACHE_HOME:-~/.cache}/ascend-finetune).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${CODE_SERVER_VERSION:-4.99.4}
LINK=.e2e/code-server
BIN=$LINK/node_modules/.bin/code-server
STAMP="code-server@$VERSION node-$(node -v) $(uname -m)"
CACHE_ROOT=${ASCEND_FINETUNE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ascend-finetune}
DEST=$CACHE_ROOT/code-server-$(printf '%s' "$STAMP" | sha256sum | cut -c1-16)

start=$(date +%s)
step_start=$start
step() { # step NAME: prints the time the previous step took
  local now
  now=$(date +%s)
  echo "== $1 ($((now - step_start)) s)"
  step_start=$now
}

# 1. Debian packages: libkrb5-dev (kerberos compiles against GSSAPI), ripgrep (its binary seeds
#    @vscode/ripgrep's cache, which would download otherwise), chromium (the browser for playwright),
#    fonts-wqy-microhei (a CJK font, 1.6 MB: without one Chromium draws the zh-cn test's Chinese as
#    empty boxes in its screenshots) and node-gyp's toolchain. apt-get update only when something is
#    missing.
apt_packages=(libkrb5-dev ripgrep chromium fonts-wqy-microhei python3 make g++)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] && ! sudo -n true 2>/dev/null; then
    echo "install-code-server: Debian packages missing (${missing[*]}) and no root: run 'sudo apt-get install ${missing[*]}' once" >&2
    exit 3
  fi
  echo "apt: installing ${missing[*]}"
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
step "apt packages present: ${apt_packages[*]}"

# 2. code-server, unless the stamp says this exact install is there already.
# The stamp is written last, so an interrupted install is redone, never half-used.
if [ -x "$DEST/node_modules/.bin/code-server" ] && [ "$(cat "$DEST/.stamp" 2>/dev/null)" = "$STAMP" ]; then
  echo "code-server cached: $STAMP in $DEST"
else
  # @vscode/ripgrep's postinstall looks for this tarball in its cache before it tries to download.
  # Debian's rg is ripgrep 13, the version that package pins. The cache folder name carries @vscode/ripgrep's version (1.15.11 in code-server 4.99.4).
  rg_cache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
  rg_tar="$rg_cache/ripgrep-v13.0.0-10-$(uname -m)-unknown-linux-musl.tar.gz"
  if [ ! -s "$rg_tar" ]; then
    mkdir -p "$rg_cache"
    stage=$(mktemp -d)
    cp /usr/bin/rg "$stage/rg"
    tar -czf "$rg_tar" -C "$stage" rg
    rm -rf "$stage"
  fi
  step "ripgrep cache seeded: $rg_tar"

  rm -rf "$DEST"
  mkdir -p "$DEST"
  # Its own package.json: code-server is a tool of the tests, not a dependency of the extension.
  echo '{ "name": "ascend-finetune-e2e-code-server", "private": true }' >"$DEST/package.json"
  (
    cd "$DEST"
    # unsafe_perm: code-server's postinstall.sh reads it and refuses root without it (npm 11 warns
    #   "Unknown env config unsafe-perm": expected, the variable is for the script, not for npm).
    # yes: node-pty's postinstall runs `npx node-gyp`, which waits for a yes and aborts without one.
    # nodedir: node-gyp takes Node's headers from /usr/include/node instead of downloading them.
    npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr \
      npm install --no-audit --no-fund --save-exact "code-server@$VERSION"
  )
  echo "$STAMP" >"$DEST/.stamp"
  step "npm install code-server@$VERSION into $DEST"
fi
if [ "$(readlink "$LINK" 2>/dev/null)" != "$DEST" ]; then
  mkdir -p "$(dirname "$LINK")"
  rm -rf "$LINK" # an older in-clone install, or a link to another version's cache
  ln -s "$DEST" "$LINK"
fi
step "linked $LINK -> $DEST"

# 3. Check that both programs start. code-server writes config under $HOME even for --version.
check_home=$(mktemp -d)
trap 'rm -rf "$check_home"' EXIT
cs_version=$(HOME=$check_home XDG_CONFIG_HOME=$check_home/config XDG_DATA_HOME=$check_home/data \
  XDG_CACHE_HOME=$check_home/cache "$BIN" --config "$check_home/config.yaml" --version | tail -1)
echo "code-server: $cs_version ($BIN)"
echo "chromium: $(/usr/bin/chromium --version 2>/dev/null)"
step "checked"
echo "install-code-server: done in $(($(date +%s) - start)) s"
