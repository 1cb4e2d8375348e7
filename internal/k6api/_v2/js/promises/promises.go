// Package promises makes promises that Go settles later on the VU's event
// loop.
package promises

import (
	"github.com/grafana/sobek"

	"go.k6.io/k6/v2/js/modules"
)

// New returns a promise of vu's runtime and the functions that settle it.
// Call it on the VU's goroutine; resolve or reject, exactly once, from any
// goroutine: the promise settles on the VU's event loop, which keeps the
// iteration open until then.
func New(vu modules.VU) (p *sobek.Promise, resolve func(result any), reject func(reason any)) {
	p, res, rej := vu.Runtime().NewPromise()
	queue := vu.RegisterCallback()
	resolve = func(result any) { queue(func() error { return res(result) }) }
	reject = func(reason any) { queue(func() error { return rej(reason) }) }
	return p, resolve, reject
}
