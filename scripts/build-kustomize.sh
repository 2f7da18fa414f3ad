#!/usr/bin/env bash
# Builds kustomize from the Go module proxy into a cache outside the repository, keyed by its version and
# this script's content, so the controller's Kustomize tests run the same pinned release the image ships.
# v5.8.2 is the newest release whose go.mod asks for no newer Go than 1.26 (it builds with
# sigs.k8s.io/kustomize/api v0.21.2). A warm cache makes this a no-op. Prints the path of the kustomize
# binary on its last line. With --check it builds nothing: it prints the path if kustomize is built and
# fails otherwise, so a test fails fast with a clear message instead of building for minutes.
set -euo pipefail
version=${KUSTOMIZE_VERSION:-v5.8.2}
cache_root=${APPLYSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/applyset-controller}
key="$version-$(sha256sum <"$0" | cut -c1-12)"
bin="$cache_root/kustomize/$key"
kustomize="$bin/kustomize"

if [ -x "$kustomize" ]; then echo "$kustomize"; exit 0; fi
if [ "${1:-}" = --check ]; then
  echo "kustomize $version is not built at $kustomize: run 'bash scripts/build-kustomize.sh' first" >&2
  exit 1
fi

command -v go >/dev/null || { echo "go is required to build kustomize (Go 1.26 or newer)" >&2; exit 1; }
echo "building kustomize $version into $bin (a cold build takes a few minutes on 2 cores)" >&2
# Build into a temporary GOBIN and move the binary in at the end, so an interrupted build never leaves a
# half-written kustomize that the warm-cache check above would take for a finished one.
tmp="$bin.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# `go install pkg@version` ignores any enclosing module and refuses -mod flags, so clear GOFLAGS. The
# module's own version is stamped by `go install`, which is what `kustomize version` prints.
export GOFLAGS= CGO_ENABLED=0
GOBIN="$tmp" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kustomize/kustomize/v5@$version"
mkdir -p "$bin"
mv "$tmp/kustomize" "$kustomize"
echo "$kustomize"
