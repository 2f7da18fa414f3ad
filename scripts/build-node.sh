#!/usr/bin/env bash
# Builds what the harness's node profile runs besides the control plane: kubelet, kube-proxy and
# kube-scheduler from the module in controlplane/node (the same Kubernetes release as the control
# plane), and a static pause program packaged as an OCI image archive for containerd. The cache is
# keyed by the release, the node module's go.mod and go.sum, and the pause program's source, so a
# warm cache makes this a no-op. Prints the bin directory on its last line.
# It also installs, with apt-get, the Debian packages the node runs (containerd, runc, the CNI plugins,
# iptables, conntrack) when one is missing; that needs root, as the node profile does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

missing=()
for pair in containerd:containerd runc:runc iptables:iptables conntrack:conntrack nsenter:util-linux; do
  command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} for the node profile" >&2
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >&2
fi
module="$root/controlplane/node"
pause_src="$root/test/harness/pause/pause.go"
version=$(cat "$root/controlplane/VERSION")
key="$version-$(cat "$module/go.mod" "$module/go.sum" "$pause_src" "$0" "$root/scripts/lib/kube-version-ldflags.sh" | sha256sum | cut -c1-12)"
if [ "${1:-}" = --print-key ]; then echo "$key"; exit 0; fi
cache_root=${APPLYSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/applyset-controller}
bin="$cache_root/node/$key/bin"
outputs=(kubelet kube-proxy kube-scheduler pause.tar)

complete() { for b in "${outputs[@]}"; do [ -s "$bin/$b" ] || return 1; done; }
if complete; then echo "$bin"; exit 0; fi
# One build at a time: test files starting the node profile together wait for the first build.
mkdir -p "$cache_root/node"
exec 9>"$cache_root/node/.lock"
flock 9
if complete; then echo "$bin"; exit 0; fi

command -v go >/dev/null || { echo "go is required to build the node (Go 1.24 or newer)" >&2; exit 1; }
echo "building node binaries $version into $bin (a few minutes with the control plane's Go cache warm)" >&2
tmp="$bin.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=lib/kube-version-ldflags.sh
source "$root/scripts/lib/kube-version-ldflags.sh"
ldflags=$(kube_version_ldflags "$version")

export GOFLAGS=-mod=readonly CGO_ENABLED=0
(
  cd "$module"
  for cmd in kubelet kube-proxy kube-scheduler; do
    go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp/$cmd" "k8s.io/kubernetes/cmd/$cmd"
  done
)

# The pause image: one static binary in an OCI layout, written by hand (no registry, no image builder).
layout="$tmp/pause-oci"
mkdir -p "$layout/rootfs" "$layout/blobs/sha256"
(cd "$(dirname "$pause_src")" && GO111MODULE=off go build -trimpath -ldflags "-s -w" -o "$layout/rootfs/pause" pause.go)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$layout/rootfs" -cf "$layout/layer.tar" pause
blob() { # file -> digest, stored under blobs/sha256
  local digest; digest=$(sha256sum "$1" | cut -d' ' -f1)
  cp "$1" "$layout/blobs/sha256/$digest"; echo "$digest"
}
layer=$(blob "$layout/layer.tar")
printf '%s' "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Entrypoint\":[\"/pause\"],\"User\":\"65535:65535\"},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$layer\"]}}" > "$layout/config.json"
config=$(blob "$layout/config.json")
printf '%s' "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"sha256:$config\",\"size\":$(stat -c%s "$layout/config.json")},\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\",\"digest\":\"sha256:$layer\",\"size\":$(stat -c%s "$layout/layer.tar")}]}" > "$layout/manifest.json"
manifest=$(blob "$layout/manifest.json")
printf '%s' "{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:$manifest\",\"size\":$(stat -c%s "$layout/manifest.json"),\"annotations\":{\"io.containerd.image.name\":\"registry.k8s.io/pause:3.10\",\"org.opencontainers.image.ref.name\":\"3.10\"}}]}" > "$layout/index.json"
printf '%s' '{"imageLayoutVersion":"1.0.0"}' > "$layout/oci-layout"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$layout" -cf "$tmp/pause.tar" oci-layout index.json blobs

mkdir -p "$bin"
for b in "${outputs[@]}"; do mv "$tmp/$b" "$bin/$b"; done
echo "$bin"
