package streams

import (
	"errors"
	"testing"

	"github.com/grafana/sobek"
)

// warm is what a VU's runtime has used before it imports the module:
// the builtins streams.js touches, which sobek makes on first use.
var warm = sobek.MustCompile("warm.js", `Promise.resolve(1).then(() => {}); new WeakMap(); Object.defineProperty({}, "a", {value: 1}); Reflect.construct(Object, []); new TypeError("x"); class A {}`, true)

// BenchmarkInstantiate measures what importing the module costs a VU:
// running the compiled streams.js in a runtime that has already used the
// builtins it touches, and making the classes.
func BenchmarkInstantiate(b *testing.B) {
	p, err := program()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		rt := sobek.New()
		if _, err := rt.RunProgram(warm); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		v, err := rt.RunProgram(p)
		if err != nil {
			b.Fatal(err)
		}
		f, _ := sobek.AssertFunction(v)
		goError := func(msg string) *sobek.Object { return rt.NewGoError(errors.New(msg)) }
		if _, err := f(sobek.Undefined(), rt.ToValue(goError)); err != nil {
			b.Fatal(err)
		}
	}
}
