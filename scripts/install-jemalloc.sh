#!/usr/bin/env bash
# Installs Debian's jemalloc, the allocator the controller's image preloads (the Dockerfile's LD_PRELOAD),
# and links it at the path the image uses, /usr/local/lib/libjemalloc.so.2, so the controller bench and
# the e2e controllers, which run dist/ with the image's environment (test/harness/image-runtime.ts),
# allocate as the image does. A no-op when the link is there. Prints the link's path on its last line.
set -euo pipefail
link=/usr/local/lib/libjemalloc.so.2
if [ -e "$link" ]; then echo "$link"; exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "jemalloc is missing at $link and installing it needs root: apt-get install -y libjemalloc2," \
    "then ln -s the library dpkg -L libjemalloc2 lists to $link" >&2
  exit 1
fi
if ! dpkg -s libjemalloc2 >/dev/null 2>&1; then
  echo "installing libjemalloc2 from Debian's packages, the image's allocator" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends libjemalloc2 >&2
fi
library=$(dpkg -L libjemalloc2 | grep '/libjemalloc\.so\.2$')
mkdir -p "$(dirname "$link")"
ln -s "$library" "$link"
echo "$link"
