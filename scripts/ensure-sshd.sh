#!/usr/bin/env bash
# The integration tests start a real OpenSSH server on 127.0.0.1; install Debian's when it is missing
# (needs root and apt-get; otherwise the SSH test fails with a message naming the package).
set -euo pipefail
[ -x /usr/sbin/sshd ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server
else
  echo "ensure-sshd: /usr/sbin/sshd is missing; install openssh-server (as root: apt-get install openssh-server)" >&2
fi
