#!/usr/bin/env bash
# Builds etcd, kube-apiserver and kube-controller-manager from the wrapper module in controlplane/
# into a cache outside the repository, keyed by the Kubernetes version and the wrapper's go.mod and
# go.sum. A warm cache makes this a no-op. Prints the bin directory on its last line.
# With --print-key it builds nothing and prints the cache key only.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
module="${APPLYSET_CONTROLPLANE_MODULE:-$root/controlplane}"
version=$(cat "$module/VERSION")
# The key hashes the files' contents only (never their paths), so every clone of the same commit, at
# any path, shares one build.
key="$version-$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-12)"
if [ "${1:-}" = --print-key ]; then echo "$key"; exit 0; fi
cache_root=${APPLYSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/applyset-controller}
bin="$cache_root/control-plane/$key/bin"
binaries=(etcd kube-apiserver kube-controller-manager)

complete=true
for b in "${binaries[@]}"; do [ -x "$bin/$b" ] || complete=false; done
if $complete; then echo "$bin"; exit 0; fi

command -v go >/dev/null || { echo "go is required to build the control plane (Go 1.24 or newer)" >&2; exit 1; }
echo "building control plane $version into $bin (a cold build takes about 5-15 minutes on 2 cores)" >&2
tmp="$bin.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=lib/kube-version-ldflags.sh
source "$root/scripts/lib/kube-version-ldflags.sh"
ldflags=$(kube_version_ldflags "$version")

cd "$module"
export GOFLAGS=-mod=readonly CGO_ENABLED=0
go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
mkdir -p "$bin"
for b in "${binaries[@]}"; do mv "$tmp/$b" "$bin/$b"; done
echo "$bin"
