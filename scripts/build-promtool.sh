#!/usr/bin/env bash
# Builds Prometheus's promtool from the Go module proxy into a cache outside the repository. The chart's
# alert rules are checked with `promtool check rules` and `promtool test rules`, the same tool Prometheus
# operators use, so a rule that names a wrong series or threshold fails a test instead of staying silent
# in production. The cache is keyed by the version and this script's content, so a warm cache makes this
# a no-op. Prints the path of the promtool binary on its last line.
# With --check it builds nothing: it prints the path if promtool is built and fails otherwise.
set -euo pipefail
# Prometheus tags its Go module v0.3xx.y for the release 3.xx.y; v0.316.0 is Prometheus 3.16.0.
version=${PROMTOOL_VERSION:-v0.316.0}
key="promtool-$version-$(sha256sum <"$0" | cut -c1-12)"
cache_root=${APPLYSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/applyset-controller}
bin="$cache_root/promtool/$key"
promtool="$bin/promtool"

if [ -x "$promtool" ]; then echo "$promtool"; exit 0; fi
if [ "${1:-}" = --check ]; then
  echo "promtool $version is not built at $promtool: run 'bash scripts/build-promtool.sh' first" >&2
  exit 1
fi
# One build at a time: test files that need promtool together wait for the first build.
mkdir -p "$cache_root/promtool"
exec 9>"$cache_root/promtool/.lock"
flock 9
if [ -x "$promtool" ]; then echo "$promtool"; exit 0; fi

command -v go >/dev/null || { echo "go is required to build promtool (Go 1.25 or newer)" >&2; exit 1; }
echo "building promtool $version into $bin (a cold build takes several minutes on 2 cores)" >&2
# Build into a temporary GOBIN and move the binary in at the end, so an interrupted build never leaves a
# half-written promtool that the warm-cache check above would take for a finished one.
tmp="$bin.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# `go install pkg@version` ignores any enclosing module and refuses -mod flags, so drop those from GOFLAGS
# (and keep the rest, such as -p=1 on a busy machine).
GOFLAGS=$(printf '%s\n' ${GOFLAGS:-} | grep -v '^-mod=' | tr '\n' ' ' || true)
export GOFLAGS CGO_ENABLED=0
minor=${version#v0.3}
release="3.$minor"
ldflags="-s -w -X github.com/prometheus/common/version.Version=$release"
GOBIN="$tmp" go install -trimpath -ldflags "$ldflags" "github.com/prometheus/prometheus/cmd/promtool@$version"
mkdir -p "$bin"
mv "$tmp/promtool" "$promtool"
echo "$promtool"
