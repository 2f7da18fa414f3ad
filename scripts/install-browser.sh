#!/usr/bin/env bash
# Installs Debian's chromium for the web view's browser tests (test/ui/) when it is missing: no browser
# build can be downloaded here, so playwright-core drives the distribution's package. A no-op when
# /usr/bin/chromium is there. Prints the browser's path on its last line.
set -euo pipefail
browser=${APPLYSET_CHROMIUM:-/usr/bin/chromium}
if [ -x "$browser" ]; then echo "$browser"; exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "chromium is missing at $browser and installing it needs root: apt-get install -y chromium" >&2
  exit 1
fi
echo "installing chromium from Debian's packages for the browser tests" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2
echo "$browser"
