# The controller image: `applyset controller` on Node 20, production dependencies only, as a non-root user.
# Build with: docker build -t applyset-controller:0.1.0 .
# BASE_IMAGE, when given, is the base of both stages: it must hold node and npm (scripts/build-image.sh
# passes one made from Debian's packages, because the tests run where no registry image can be pulled).
# Left empty, the stages use the official node images users pull.
# GO_IMAGE is the stage that builds kustomize and helm from the Go module proxy: any image with Go 1.26 that can
# reach the proxy (scripts/build-image.sh passes one made of the same Debian base and this machine's Go).
ARG BASE_IMAGE=
ARG GO_IMAGE=golang:1.26-bookworm

# kustomize for ApplySets whose path holds a kustomization (docs/kustomize.md): the release
# scripts/build-kustomize.sh builds for the tests, static, stripped.
FROM ${GO_IMAGE} AS kustomize
ARG KUSTOMIZE_VERSION=v5.8.2
RUN CGO_ENABLED=0 GOBIN=/out go install -trimpath -ldflags "-s -w" \
    "sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}" && /out/kustomize version

# helm for ApplySets with spec.helm (docs/helm.md): built by scripts/build-helm.sh, the script that
# builds the tests' helm, so the image renders exactly as the tests do (the same version and the same
# Kubernetes version baked in for `helm template`), static and stripped.
FROM ${GO_IMAGE} AS helm
ARG HELM_VERSION=v3.22.0
COPY scripts/build-helm.sh /build-helm.sh
RUN HELM_VERSION=${HELM_VERSION} APPLYSET_CACHE_DIR=/cache bash /build-helm.sh \
    && mkdir -p /out && mv /cache/helm/${HELM_VERSION}/helm /out/helm && /out/helm version --short

FROM ${BASE_IMAGE:-node:20} AS build
WORKDIR /app
# Dependencies first, so a source change does not reinstall them. --ignore-scripts skips `prepare`,
# which would compile before the sources are here; the build runs explicitly below.
COPY package.json package-lock.json .npmrc ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${BASE_IMAGE:-node:20-slim} AS runtime
ENV NODE_ENV=production \
    APPLYSET_GIT_CACHE_DIR=/var/cache/applyset \
    HOME=/tmp
# jemalloc as node's allocator instead of glibc's malloc. What node and V8 allocate outside the
# JavaScript heap (the buffers of sockets, answers and packs among it) glibc kept once freed: at 1,000
# ApplySets at rest its main arena held 42 MiB, of which a malloc_trim(0) gave 34 back. jemalloc returns
# freed pages within seconds (docs/performance.md). Linked at one path whatever the architecture;
# `npm run bench -- --controller` and the e2e controllers preload the same path on the host.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libjemalloc2 \
    && ln -s "$(dpkg -L libjemalloc2 | grep '/libjemalloc\.so\.2$')" /usr/local/lib/libjemalloc.so.2 \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# --ignore-scripts: `prepare` would run tsc, which is a dev dependency and is not installed here.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=kustomize /out/kustomize /usr/local/bin/kustomize
COPY --from=helm /out/helm /usr/local/bin/helm
COPY bin ./bin
# The Git cache must be writable by the runtime user; in Kubernetes the chart mounts an emptyDir here
# because the root filesystem is read-only.
RUN mkdir -p /var/cache/applyset && chown 65532:65532 /var/cache/applyset
# Numeric, so the kubelet can verify runAsNonRoot without reading /etc/passwd.
USER 65532:65532
EXPOSE 8080
# Node runs as PID 1 without an init; the controller installs its own SIGTERM handler (finish in-flight
# writes, release the Lease), so the signal is not lost. Semi-spaces of 8 MiB instead of V8's 16: the
# young generation stays small in a reconcile burst (4 MiB cost 8% more CPU in the burst for 8 MiB
# less peak RSS, docs/performance.md). A heap grown by 30% over what the last full
# collection kept, not V8's up to 4x: the controller's live heap is small (about 20 MiB at 1,000
# ApplySets) and its full collections cheap, so V8 would let garbage fill three times that before
# collecting. `npm run bench -- --controller` runs these flags, read from this line.
ENTRYPOINT ["node", "--max-semi-space-size=8", "--heap-growing-percent=30", "bin/applyset.js", "controller"]
CMD ["--metrics-addr", ":8080"]
