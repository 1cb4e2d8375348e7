// Package modules is how an extension adds a JavaScript module: Register
// it under "k6/x/NAME" from an init function, and each VU that imports it
// gets its own instance, made with the VU it runs in.
package modules

import (
	"context"
	"fmt"
	"strings"

	"github.com/grafana/sobek"

	"go.k6.io/k6/v2/ext"
	"go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/lib"
)

// extPrefix begins the name of every extension module.
const extPrefix = "k6/x/"

// Register makes mod importable as name, which must begin with "k6/x/".
// mod is a Module, whose NewModuleInstance runs once per VU, or any other
// Go value, which every VU then shares as the module's default export
// (its fields and methods are the named exports).
func Register(name string, mod any) {
	if !strings.HasPrefix(name, extPrefix) {
		panic(fmt.Errorf("external module names must be prefixed with '%s', tried to register: %s", extPrefix, name))
	}
	ext.Register(name, ext.JSExtension, mod)
	plugIn(name, mod)
}

// Module is a module that makes an instance for each VU.
type Module interface {
	NewModuleInstance(VU) Instance
}

// Instance is a module's instance in one VU.
type Instance interface {
	Exports() Exports
}

// VU is what a module instance sees of its VU.
type VU interface {
	// Context is cancelled when the VU's current iteration ends early; in
	// the init context it is the test's.
	Context() context.Context
	// InitEnv is non-nil only while the init context runs.
	InitEnv() *common.InitEnvironment
	// State is nil in the init context and set while setup, an iteration
	// or teardown runs.
	State() *lib.State
	// Runtime is the VU's JavaScript runtime.
	Runtime() *sobek.Runtime
	// RegisterCallback reserves a place in the VU's event loop: the
	// iteration does not end before the returned function was called,
	// exactly once and from any goroutine, with a function that then runs
	// on the VU's goroutine.
	RegisterCallback() (enqueueCallback func(func() error))
}

// Exports are what the module's importers see: the named exports, and a
// default export (when nil, an object holding the named ones).
type Exports struct {
	Default any
	Named   map[string]any
}
