# Sourced by the build scripts of Kubernetes binaries. kube_version_ldflags VERSION prints the linker
# flags that stamp VERSION into a binary the way hack/lib/version.sh does upstream, so /version and
# `--version` report the real release rather than v0.0.0.
kube_version_ldflags() {
  local version=$1 major minor flags="" pkg
  major=${version#v}; major=${major%%.*}
  minor=${version#v*.}; minor=${minor%%.*}
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$flags"
}
