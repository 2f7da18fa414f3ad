#!/usr/bin/env bash
# Builds Jaeger, the real trace backend the tracing tests export spans to and read them back from
# (test/harness/jaeger-server.ts), from the Go module proxy into a cache outside the repository, keyed by
# the version and this script's content, so a warm cache makes this a no-op. Prints the path of the
# jaeger binary on its last line.
# With --check it builds nothing: it prints the path if jaeger is built and fails otherwise.
set -euo pipefail
# The Go module's v1.76.0 tag is the release whose `cmd/jaeger` is Jaeger v2 (2.13.0), an OpenTelemetry
# collector distribution configured by a YAML file (the harness writes one).
version=${JAEGER_VERSION:-v1.76.0}
key="jaeger-$version-$(sha256sum <"$0" | cut -c1-12)"
cache_root=${APPLYSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/applyset-controller}
bin="$cache_root/jaeger/$key"
jaeger="$bin/jaeger"

if [ -x "$jaeger" ]; then echo "$jaeger"; exit 0; fi
if [ "${1:-}" = --check ]; then
  echo "jaeger $version is not built at $jaeger: run 'bash scripts/build-jaeger.sh' first" >&2
  exit 1
fi
# One build at a time: test files that need Jaeger together wait for the first build.
mkdir -p "$cache_root/jaeger"
exec 9>"$cache_root/jaeger/.lock"
flock 9
if [ -x "$jaeger" ]; then echo "$jaeger"; exit 0; fi

command -v go >/dev/null || { echo "go is required to build jaeger (Go 1.25 or newer)" >&2; exit 1; }
echo "building jaeger $version into $bin (a cold build takes many minutes on 2 cores)" >&2
# Build in a temporary module and move the binary in at the end, so an interrupted build never leaves a
# half-written jaeger that the warm-cache check above would take for a finished one.
tmp="$bin.tmp.$$"
mkdir -p "$tmp"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# The module is built as a dependency (a tool of a throwaway module), which needs the -mod flags gone
# from GOFLAGS (and keeps the rest, such as -p=1 on a busy machine).
GOFLAGS=$(printf '%s\n' ${GOFLAGS:-} | grep -v '^-mod=' | tr '\n' ' ' || true)
export GOFLAGS CGO_ENABLED=0
(
  cd "$tmp"
  go mod init applyset-controller.test/jaeger-build >/dev/null 2>&1
  go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$version"
  go build -trimpath -ldflags "-s -w" -o "$tmp/out/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger
)
mkdir -p "$bin"
mv "$tmp/out/jaeger" "$jaeger"
echo "$jaeger"
