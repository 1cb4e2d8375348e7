// Package promises makes promises that Go settles later on the VU's event
// loop (see go.k6.io/k6/v2/js/promises).
package promises

import (
	"github.com/grafana/sobek"

	"go.k6.io/k6/js/modules"
	v2 "go.k6.io/k6/v2/js/promises"
)

// New returns a promise of vu's runtime and the functions that settle it.
func New(vu modules.VU) (p *sobek.Promise, resolve func(result any), reject func(reason any)) {
	return v2.New(vu)
}
