#!/usr/bin/env bash
# Builds the real OCI tools from the Go module proxy into a cache outside the repository: distribution's
# registry (htpasswd basic auth, push notifications), oras, which pushes artifacts in Flux's shape, and
# cosign, which makes key pairs and signs artifacts with a key, offline. The tests of pulling manifests
# from OCI artifacts run against these (test/harness/oci-registry.ts, test/harness/oci-tools.ts). The
# cache is keyed by the versions and this script's content, so a warm cache makes this a no-op. Prints
# the bin directory on its last line.
# With --check it builds nothing: it prints the directory if all three are built and fails otherwise.
set -euo pipefail
registry_version=${REGISTRY_VERSION:-v3.1.2}
oras_version=${ORAS_VERSION:-v1.3.6}
# cosign v2 stores a signature as Flux's verifier reads it (a `sha256-<hex>.sig` tag); v3 writes a
# Sigstore bundle by default.
cosign_version=${COSIGN_VERSION:-v2.6.5}
key="registry-$registry_version-oras-$oras_version-cosign-$cosign_version-$(sha256sum <"$0" | cut -c1-12)"
cache_root=${APPLYSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/applyset-controller}
bin="$cache_root/oci/$key"

complete() { [ -x "$bin/registry" ] && [ -x "$bin/oras" ] && [ -x "$bin/cosign" ]; }
if complete; then echo "$bin"; exit 0; fi
if [ "${1:-}" = --check ]; then
  echo "the OCI tools are not built at $bin: run 'bash scripts/build-oci-tools.sh' first" >&2
  exit 1
fi
# One build at a time: test files that need the tools together wait for the first build.
mkdir -p "$cache_root/oci"
exec 9>"$cache_root/oci/.lock"
flock 9
if complete; then echo "$bin"; exit 0; fi

command -v go >/dev/null || { echo "go is required to build the OCI tools (Go 1.26.7 or newer)" >&2; exit 1; }
echo "building registry $registry_version, oras $oras_version and cosign $cosign_version into $bin" \
  "(a cold build takes minutes)" >&2
# Build into a temporary GOBIN and move the binaries in at the end, so an interrupted build never leaves
# a half-written binary that the warm-cache check above would take for a finished one.
tmp="$bin.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# `go install pkg@version` ignores any enclosing module and refuses -mod flags, so drop those from GOFLAGS
# (and keep the rest, such as -p=1 on a busy machine).
GOFLAGS=$(printf '%s\n' ${GOFLAGS:-} | grep -v '^-mod=' | tr '\n' ' ' || true)
export GOFLAGS CGO_ENABLED=0
# Each tool's version variable is set as its own release build sets it, so `--version` tells which it is.
GOBIN="$tmp" go install -trimpath \
  -ldflags "-s -w -X github.com/distribution/distribution/v3/version.version=$registry_version" \
  "github.com/distribution/distribution/v3/cmd/registry@$registry_version"
GOBIN="$tmp" go install -trimpath -ldflags "-s -w" "oras.land/oras/cmd/oras@$oras_version"
GOBIN="$tmp" go install -trimpath \
  -ldflags "-s -w -X sigs.k8s.io/release-utils/version.gitVersion=$cosign_version" \
  "github.com/sigstore/cosign/v2/cmd/cosign@$cosign_version"
mkdir -p "$bin"
mv "$tmp/registry" "$tmp/oras" "$tmp/cosign" "$bin/"
echo "$bin"
