#!/usr/bin/env bash
# Installs Debian's OpenSSH server for the Git-over-SSH tests (test/harness/ssh-git-server.ts runs its
# sshd on loopback, as the tests' user, with a config of its own; no service is started). A no-op when
# /usr/sbin/sshd is there.
set -euo pipefail
sshd=${APPLYSET_SSHD:-/usr/sbin/sshd}
if [ -x "$sshd" ]; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "sshd is missing at $sshd and installing it needs root: apt-get install -y openssh-server" >&2
  exit 1
fi
echo "installing openssh-server from Debian's packages for the Git-over-SSH tests" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends openssh-server >&2
