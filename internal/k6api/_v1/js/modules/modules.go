// Package modules is how an extension adds a JavaScript module (see
// go.k6.io/k6/v2/js/modules).
package modules

import v2 "go.k6.io/k6/v2/js/modules"

// Register makes mod importable as name, which must begin with "k6/x/".
func Register(name string, mod any) { v2.Register(name, mod) }

// Module is a module that makes an instance for each VU.
type Module = v2.Module

// Instance is a module's instance in one VU.
type Instance = v2.Instance

// VU is what a module instance sees of its VU.
type VU = v2.VU

// Exports are what the module's importers see.
type Exports = v2.Exports
