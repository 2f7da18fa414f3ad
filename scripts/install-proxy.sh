#!/usr/bin/env bash
# Installs Debian's tinyproxy for the proxy tests (test/e2e/controller-proxy.itest.ts, test/harness/tinyproxy.ts):
# a real HTTP CONNECT proxy the controller's requests go through. A no-op when /usr/bin/tinyproxy is there.
# Prints the proxy's path on its last line.
set -euo pipefail
proxy=${APPLYSET_TINYPROXY:-/usr/bin/tinyproxy}
if [ -x "$proxy" ]; then echo "$proxy"; exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "tinyproxy is missing at $proxy and installing it needs root: apt-get install -y tinyproxy" >&2
  exit 1
fi
echo "installing tinyproxy from Debian's packages for the proxy tests" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends tinyproxy >&2
echo "$proxy"
