#!/usr/bin/env bash
# What `npm test` needs beyond node_modules, each built (or installed) once and cached by content: a
# warm run is a no-op. .ci/run calls the same scripts one by one, to show each one's progress.
set -euo pipefail
cd "$(dirname "$0")"
for step in build-control-plane build-helm build-node build-kustomize build-sops build-oci-tools build-promtool build-gitea install-browser install-jemalloc; do
  bash "$step.sh"
done
