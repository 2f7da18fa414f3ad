//go:build tools

// Package tools pins the control-plane commands that the test harness builds: kube-apiserver and
// kube-controller-manager from k8s.io/kubernetes, and etcd at the version k8s.io/kubernetes pins.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
