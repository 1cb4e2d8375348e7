// Package streams implements "k6/experimental/streams": ReadableStream,
// ReadableStreamDefaultReader, WritableStream, WritableStreamDefaultWriter
// and CountQueuingStrategy, the part of the WHATWG Streams Standard k6
// v2.2.0 has (default streams; no byte streams, tee, piping or
// transforms), with k6's error messages.
//
// The streams are JavaScript (streams.js), compiled once per process and
// run in each VU that uses the module. The standard is written as
// algorithms over promises; in JavaScript its promises are the VU's own,
// so they settle on the VU's microtask queue in the order the standard
// gives, and no Go state has to be kept in step with JavaScript objects.
// The price is memory: a VU's copy of the classes and the standard's
// operations is about 140 KB of function objects.
package streams

import (
	_ "embed" // the streams' source
	"errors"
	"fmt"
	"sync"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
)

func init() {
	// Running streams.js costs a VU about 140 KB (BenchmarkInstantiate),
	// so a VU whose script imports the module but never reads an export
	// does not run it.
	modules.Register("k6/experimental/streams", modules.OnFirstUse(modules.ModuleFunc(New)))
}

//go:embed streams.js
var source string

// program is streams.js compiled: a function expression that takes a
// maker of GoErrors and returns the exported classes.
var program = sync.OnceValues(func() (*sobek.Program, error) {
	return sobek.Compile("k6/experimental/streams", source, true)
})

// exportNames are the module's exports, k6 v2.2.0's.
var exportNames = []string{
	"CountQueuingStrategy", "ReadableStream", "ReadableStreamDefaultReader",
	"WritableStream", "WritableStreamDefaultWriter",
}

// New instantiates the module for one VU: it runs streams.js in the VU's
// runtime and exports the classes it returns.
func New(vu modules.VU) (modules.Exports, error) {
	p, err := program()
	if err != nil {
		return modules.Exports{}, fmt.Errorf("k6/experimental/streams: %w", err)
	}
	rt := vu.Runtime()
	v, err := rt.RunProgram(p)
	if err != nil {
		return modules.Exports{}, fmt.Errorf("k6/experimental/streams: %w", err)
	}
	factory, ok := sobek.AssertFunction(v)
	if !ok {
		return modules.Exports{}, errors.New("k6/experimental/streams: streams.js is not a function")
	}
	// k6 throws the streams' NotSupportedErrors as GoErrors.
	goError := func(msg string) *sobek.Object { return rt.NewGoError(errors.New(msg)) }
	classes, err := factory(sobek.Undefined(), rt.ToValue(goError))
	if err != nil {
		return modules.Exports{}, fmt.Errorf("k6/experimental/streams: %w", err)
	}
	obj := classes.ToObject(rt)
	named := make(map[string]any, len(exportNames))
	for _, name := range exportNames {
		named[name] = obj.Get(name)
	}
	return modules.Exports{Named: named}, nil
}
