#!/usr/bin/env bash
# Builds the controller's image from the repository's Dockerfile on a base made here from Debian's
# packages, because no registry image can be pulled on the machines the tests run on. Installs docker.io
# and mmdebstrap when missing and starts a dockerd when none answers. Both outputs are cached outside the
# repository, keyed by content: the base by its recipe and the node and npm copied into it, the image by
# the base, the Dockerfile and every file it copies. A warm cache only makes sure dockerd holds the image.
# The image is also saved as a tar (for `ctr images import` into a node's containerd). The last line is
# JSON: {"reference": ..., "archivePath": ..., "sizeBytes": ...}.
# With --print-key it builds nothing and prints the image's cache key only.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache_root=${APPLYSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/applyset-controller}
cache="$cache_root/image"
log() { echo "build-image: $*" >&2; }

# The base holds the node that runs the tests on this machine (Node 20; Debian 12's own nodejs is 18,
# too old for the package's engines), so the image runs the same node the suite was measured with.
node_bin=$(readlink -f "${APPLYSET_IMAGE_NODE:-$(command -v node)}")
npm_dir=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)
node_version=$("$node_bin" --version)
[[ "$node_version" == v20.* ]] || { log "the base needs Node 20, $node_bin is $node_version"; exit 1; }

# The CA bundle this machine trusts goes into the base with an npm config naming it, so the build's
# `npm ci` reaches the registry through whatever TLS proxy this machine's own npm goes through. It is
# npm's setting only: the controller's node keeps its built-in roots, as on the official image.
ca_bundle=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
[ -f "$ca_bundle" ] || { log "no CA bundle at $ca_bundle (set SSL_CERT_FILE)"; exit 1; }

suite=bookworm
mirrors=(
  "deb http://deb.debian.org/debian $suite main"
  "deb http://deb.debian.org/debian $suite-updates main"
  "deb http://deb.debian.org/debian-security $suite-security main"
)
# minbase: essential packages and apt only. Documentation, manuals and translations are left out; the
# licences stay.
base_recipe=(
  --variant=minbase
  --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  --customize-hook='mkdir -p "$1/usr/local/lib/node_modules"'
  --customize-hook="copy-in $node_bin /usr/local/bin"
  --customize-hook="copy-in $npm_dir /usr/local/lib/node_modules"
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"'
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"'
  --customize-hook='mkdir -p "$1/etc/ssl/certs" "$1/usr/local/etc"'
  --customize-hook="upload $ca_bundle /etc/ssl/certs/ca-certificates.crt"
  --customize-hook='echo cafile=/etc/ssl/certs/ca-certificates.crt >"$1/usr/local/etc/npmrc"'
)
npm_version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$npm_dir/package.json")
base_key=$({
  printf '%s\n' "$suite" "${mirrors[@]}" "${base_recipe[@]}" "npm $npm_version"
  sha256sum <"$node_bin"
  sha256sum <"$ca_bundle"
} | sha256sum | cut -c1-12)
base_ref="applyset-node-base:$base_key"

# The Dockerfile's kustomize stage builds from the Go module proxy in an image with Go: here the base
# above plus this machine's own Go toolchain, with the module settings its go uses (the proxy, the
# checksum database, GOFLAGS; the CA bundle is in the base already), so the build reaches the proxy
# through whatever this machine's go goes through. Keyed by the base, Go's version and those settings.
command -v go >/dev/null || { log "go is required to make the Go image the kustomize stage builds in"; exit 1; }
go_root=$(go env GOROOT)
go_settings=()
for name in GOPROXY GOSUMDB GONOSUMDB GOPRIVATE GONOPROXY GOINSECURE GOFLAGS; do
  go_settings+=("$name=\"$(go env "$name")\"")
done
go_key=$({
  printf '%s\n' "$base_key" "$(go env GOVERSION)" "${go_settings[@]}"
} | sha256sum | cut -c1-12)
go_ref="applyset-go-base:$go_key"

# The image's key: the base, the Dockerfile, .dockerignore and the sources of every COPY that reads the
# build context (read from the Dockerfile, so a new COPY is keyed without touching this script). Paths
# are relative, so every clone of the same commit shares one build.
copied=$(awk '$1 == "COPY" && $2 !~ /^--from/ { for (i = 2; i < NF; i++) print $i }' "$root/Dockerfile")
image_key=$({
  echo "$base_key" "$go_key"
  # shellcheck disable=SC2086 # the COPY sources are one word each
  cd "$root" && find Dockerfile .dockerignore $copied -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
} | sha256sum | cut -c1-12)
if [ "${1:-}" = --print-key ]; then echo "$image_key"; exit 0; fi
image_ref="applyset-controller:local-$image_key"
archive="$cache/$image_key/applyset-controller.tar"

mkdir -p "$cache"
# One build at a time per cache: parallel test processes and CI steps wait for the first one.
exec 9>"$cache/build.lock"
flock 9

install_missing() {
  local packages=()
  command -v dockerd >/dev/null || packages+=(docker.io)
  command -v mmdebstrap >/dev/null || packages+=(mmdebstrap)
  [ "${#packages[@]}" -eq 0 ] && return 0
  log "installing ${packages[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >&2
}

# Starts a dockerd of our own when none answers on the default socket. Its defaults work here (overlay2
# on ext4, iptables NAT for the build's bridge network); it outlives this script, so later runs find it.
ensure_dockerd() {
  docker info >/dev/null 2>&1 && return 0
  mkdir -p "$cache/dockerd"
  log "starting dockerd (log: $cache/dockerd/dockerd.log)"
  # 9>&-: dockerd must not inherit the build lock, or it would hold it for as long as it runs.
  setsid dockerd --pidfile "$cache/dockerd/dockerd.pid" >"$cache/dockerd/dockerd.log" 2>&1 </dev/null 9>&- &
  local deadline=$((SECONDS + 60))
  until docker info >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      log "dockerd did not answer within 60 s; the end of its log:"
      tail -20 "$cache/dockerd/dockerd.log" >&2
      exit 1
    fi
    sleep 1
  done
}

has_image() { docker image inspect "$1" >/dev/null 2>&1; }

ensure_base() {
  has_image "$base_ref" && return 0
  local rootfs="$cache/base-$base_key.tar"
  if [ ! -f "$rootfs" ]; then
    log "making the base $base_ref from Debian $suite with mmdebstrap (about 2 minutes)"
    mmdebstrap --quiet --format=tar "${base_recipe[@]}" "$suite" "$rootfs.tmp.$$" "${mirrors[@]}" >&2
    mv "$rootfs.tmp.$$" "$rootfs"
  fi
  docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' "$rootfs" "$base_ref" >/dev/null
}

# The base with this machine's Go in /usr/local/go: a build context of a Dockerfile and the Go tree,
# streamed to docker as a tar, so nothing is copied on disk first.
ensure_go_image() {
  has_image "$go_ref" && return 0
  ensure_base
  log "making $go_ref: $base_ref with $(go env GOVERSION) from $go_root"
  local context
  context=$(mktemp -d)
  {
    echo "FROM $base_ref"
    echo "COPY go /usr/local/go"
    echo 'ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOTOOLCHAIN=local'
    echo "ENV ${go_settings[*]}"
  } >"$context/Dockerfile"
  tar -c -C "$context" Dockerfile -C "$(dirname "$go_root")" --transform "s,^$(basename "$go_root"),go," \
    "$(basename "$go_root")" | DOCKER_BUILDKIT=0 docker build --quiet --tag "$go_ref" - >&2
  rm -rf "$context"
}

ensure_image() {
  if [ -f "$archive" ]; then
    has_image "$image_ref" || docker load --quiet --input "$archive" >&2
    return 0
  fi
  ensure_base
  ensure_go_image
  log "building $image_ref on $base_ref (kustomize built in $go_ref)"
  # The classic builder: BuildKit would fetch its Dockerfile frontend from a registry.
  DOCKER_BUILDKIT=0 docker build --quiet --build-arg "BASE_IMAGE=$base_ref" --build-arg "GO_IMAGE=$go_ref" \
    --tag "$image_ref" "$root" >&2
  mkdir -p "$(dirname "$archive")"
  docker save --output "$archive.tmp.$$" "$image_ref"
  mv "$archive.tmp.$$" "$archive"
}

install_missing
ensure_dockerd
ensure_image
size=$(docker image inspect --format '{{.Size}}' "$image_ref")
printf '{"reference":"%s","archivePath":"%s","sizeBytes":%s}\n' "$image_ref" "$archive" "$size"
