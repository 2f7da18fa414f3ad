#!/usr/bin/env bash
# Builds helm from the Go module proxy into a cache outside the repository, keyed by its version, so the
# chart tests can run `helm lint` and `helm template` without a prebuilt download (none can be fetched
# here). A warm cache makes this a no-op. Prints the path of the helm binary on its last line.
set -euo pipefail
version=${HELM_VERSION:-v3.22.0}
cache_root=${APPLYSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/applyset-controller}
bin="$cache_root/helm/$version"
helm="$bin/helm"

if [ -x "$helm" ]; then echo "$helm"; exit 0; fi

command -v go >/dev/null || { echo "go is required to build helm (Go 1.24 or newer)" >&2; exit 1; }
echo "building helm $version into $bin (a cold build takes several minutes on 2 cores)" >&2
# Build into a temporary GOBIN and move the binary in at the end, so an interrupted build never leaves a
# half-written helm that the warm-cache check above would take for a finished one.
tmp="$bin.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# `go install pkg@version` ignores any enclosing module and refuses -mod flags, so clear GOFLAGS. The -X
# sets what helm's own Makefile sets, so `helm version` names the release.
GOFLAGS= CGO_ENABLED=0 GOBIN="$tmp" go install -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$version" "helm.sh/helm/v3/cmd/helm@$version"
mkdir -p "$bin"
mv "$tmp/helm" "$helm"
echo "$helm"
