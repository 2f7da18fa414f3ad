//go:build tools

// Package tools pins the node commands the test harness's node profile builds: kubelet, kube-proxy and
// kube-scheduler, from the same k8s.io/kubernetes release as the control plane in the parent directory.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
