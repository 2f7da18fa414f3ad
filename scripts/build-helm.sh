#!/usr/bin/env bash
# Builds helm from the Go module proxy into a cache outside the repository, keyed by its version, so the
# chart tests can run `helm lint` and `helm template` without a prebuilt download (none can be fetched
# here). A warm cache makes this a no-op. Prints the path of the helm binary on its last line.
# With --check it builds nothing: it prints the path if helm is built and fails otherwise (the chart
# tests use this, so they fail fast with a clear message instead of building for minutes).
set -euo pipefail
version=${HELM_VERSION:-v3.22.0}
cache_root=${APPLYSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/applyset-controller}
bin="$cache_root/helm/$version"
helm="$bin/helm"

if [ -x "$helm" ]; then echo "$helm"; exit 0; fi
if [ "${1:-}" = --check ]; then
  echo "helm $version is not built at $helm: run 'bash scripts/build-helm.sh' first" >&2
  exit 1
fi

command -v go >/dev/null || { echo "go is required to build helm (Go 1.24 or newer)" >&2; exit 1; }
echo "building helm $version into $bin (a cold build takes several minutes on 2 cores)" >&2
# Build into a temporary GOBIN and move the binary in at the end, so an interrupted build never leaves a
# half-written helm that the warm-cache check above would take for a finished one.
tmp="$bin.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# `go install pkg@version` ignores any enclosing module and refuses -mod flags, so clear GOFLAGS.
export GOFLAGS= CGO_ENABLED=0
# The -X flags are those of helm's own Makefile: the release for `helm version`, and the Kubernetes
# version that `helm template` and `helm lint` assume without a cluster, taken from the client-go that
# helm is built with (v0.N.x is Kubernetes 1.N); left out, helm assumes Kubernetes 1.20.
gomod=$(cd "$tmp" && go mod download -json "helm.sh/helm/v3@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
client_go=$(awk '$1 == "k8s.io/client-go" { print $2 }' "$gomod")
k8s_minor=$(echo "$client_go" | cut -d. -f2)
[[ "$k8s_minor" =~ ^[0-9]+$ ]] || { echo "cannot tell the client-go version of helm $version from $gomod" >&2; exit 1; }
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$version"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
done
GOBIN="$tmp" go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$version"
mkdir -p "$bin"
mv "$tmp/helm" "$helm"
echo "$helm"
