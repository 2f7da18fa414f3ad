#!/usr/bin/env bash
# Builds Gitea, a real Git forge the tests push to and receive webhooks from, into a cache outside the
# repository, keyed by the Gitea version and this script's content, so a warm cache makes this a no-op.
# Prints the directory on its last line: it holds the `gitea` binary and the templates and options
# (locales, licences, gitignores) that a build without the `bindata` tag reads from disk.
# With --check it builds nothing: it prints the directory if Gitea is built and fails otherwise.
set -euo pipefail
# v1.27 needs modules the Go module proxy does not serve (gitea.dev/actions-proto-go, gitea.dev/sdk and
# gitlab.com/gitlab-org/api/client-go/v2 answer 403 "not available"); v1.26.0 builds with go1.26.
version=${GITEA_VERSION:-v1.26.0}
key="$version-$(sha256sum <"$0" | cut -c1-12)"
cache_root=${APPLYSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/applyset-controller}
dir="$cache_root/gitea/$key"

complete() { [ -x "$dir/gitea" ] && [ -d "$dir/options" ] && [ -d "$dir/templates" ]; }
if complete; then echo "$dir"; exit 0; fi
if [ "${1:-}" = --check ]; then
  echo "gitea $version is not built at $dir: run 'bash scripts/build-gitea.sh' first" >&2
  exit 1
fi
# One build at a time: test files that need Gitea together wait for the first build.
mkdir -p "$cache_root/gitea"
exec 9>"$cache_root/gitea/.lock"
flock 9
if complete; then echo "$dir"; exit 0; fi

command -v go >/dev/null || { echo "go is required to build gitea (Go 1.26 or newer)" >&2; exit 1; }
echo "building gitea $version into $dir (a cold build takes about 20 minutes on 2 cores)" >&2
tmp="$dir.tmp.$$"
mkdir -p "$tmp"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# Gitea's go.mod has replace directives, which `go install pkg@version` refuses: download the module
# and build it as the main module from a writable copy (the module cache is read-only).
GOFLAGS=$(printf '%s\n' ${GOFLAGS:-} | grep -v '^-mod=' | tr '\n' ' ' || true)
export GOFLAGS
src=$(go mod download -json "code.gitea.io/gitea@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "go mod download gave no directory for code.gitea.io/gitea@$version" >&2; exit 1; }
cp -R "$src" "$tmp/src"
chmod -R u+w "$tmp/src"
# Gitea 1.26 supports SQLite only through mattn/go-sqlite3, a cgo package, behind the `sqlite` tag
# (`sqlite_unlock_notify` as Gitea's own releases build it). Without `bindata` the web assets are not
# embedded; the API and Git over HTTP, which is all the tests use, need only the templates and options
# copied beside the binary.
command -v gcc >/dev/null || { echo "gcc is required to build gitea's SQLite driver (cgo)" >&2; exit 1; }
tags="sqlite sqlite_unlock_notify"
(cd "$tmp/src" && CGO_ENABLED=1 go build -trimpath -tags "$tags" \
  -ldflags "-s -w -X 'main.Version=${version#v}' -X 'main.Tags=$tags'" -o "$tmp/out/gitea" .)
cp -R "$tmp/src/options" "$tmp/src/templates" "$tmp/out/"
mkdir -p "$dir"
mv "$tmp/out/options" "$tmp/out/templates" "$dir/"
mv "$tmp/out/gitea" "$dir/gitea"
echo "$dir"
