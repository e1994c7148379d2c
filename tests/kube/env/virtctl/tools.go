//go:build tools

// The real virtctl of KubeVirt v1.7.0 is built with
// `go build kubevirt.io/kubevirt/cmd/virtctl` inside this module; this
// file keeps that requirement in go.mod and go.sum (the tools.go pattern).
package tools

import _ "kubevirt.io/kubevirt/cmd/virtctl"
