#!/usr/bin/env bash
# Builds the real sops and age-keygen from the Go module proxy into a cache outside the repository. The
# tests of the controller's own sops decryption encrypt their fixtures with these and compare what we
# decrypt with `sops -d`. The cache is keyed by both versions and this script's content, so a warm cache
# makes this a no-op. Prints the bin directory on its last line.
# With --check it builds nothing: it prints the directory if both are built and fails otherwise.
set -euo pipefail
sops_version=${SOPS_VERSION:-v3.13.3}
age_version=${AGE_VERSION:-v1.3.2}
key="sops-$sops_version-age-$age_version-$(sha256sum <"$0" | cut -c1-12)"
cache_root=${APPLYSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/applyset-controller}
bin="$cache_root/sops/$key"

complete() { [ -x "$bin/sops" ] && [ -x "$bin/age-keygen" ]; }
if complete; then echo "$bin"; exit 0; fi
if [ "${1:-}" = --check ]; then
  echo "sops $sops_version is not built at $bin: run 'bash scripts/build-sops.sh' first" >&2
  exit 1
fi
# One build at a time: test files that need sops together wait for the first build.
mkdir -p "$cache_root/sops"
exec 9>"$cache_root/sops/.lock"
flock 9
if complete; then echo "$bin"; exit 0; fi

command -v go >/dev/null || { echo "go is required to build sops (Go 1.24 or newer)" >&2; exit 1; }
echo "building sops $sops_version and age-keygen $age_version into $bin (a cold build takes minutes)" >&2
# Build into a temporary GOBIN and move the binaries in at the end, so an interrupted build never leaves
# a half-written binary that the warm-cache check above would take for a finished one.
tmp="$bin.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# `go install pkg@version` ignores any enclosing module and refuses -mod flags, so drop those from GOFLAGS
# (and keep the rest, such as -p=1 on a busy machine).
GOFLAGS=$(printf '%s\n' ${GOFLAGS:-} | grep -v '^-mod=' | tr '\n' ' ' || true)
export GOFLAGS CGO_ENABLED=0
GOBIN="$tmp" go install -trimpath -ldflags "-s -w" "github.com/getsops/sops/v3/cmd/sops@$sops_version"
GOBIN="$tmp" go install -trimpath -ldflags "-s -w" "filippo.io/age/cmd/age-keygen@$age_version"
mkdir -p "$bin"
mv "$tmp/sops" "$tmp/age-keygen" "$bin/"
echo "$bin"
