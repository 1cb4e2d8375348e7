package http

import (
	"math"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// expected is a response callback made by expectedStatuses: a status is
// expected when it is in codes or in one of the inclusive ranges; or a Go
// module's (Request.Expected).
type expected struct {
	codes  []int
	ranges [][2]int
	// fn, when set, decides alone: a Go module's callback (Request).
	fn func(status int) bool
}

// defaultExpected is k6's default callback, expectedStatuses({min: 200,
// max: 399}).
var defaultExpected = &expected{ranges: [][2]int{{200, 399}}}

func (e *expected) match(status int) bool {
	if e.fn != nil {
		return e.fn(status)
	}
	for _, c := range e.codes {
		if c == status {
			return true
		}
	}
	for _, r := range e.ranges {
		if status >= r[0] && status <= r[1] {
			return true
		}
	}
	return false
}

// jsExpectedStatuses is http.expectedStatuses(...statuses): each argument
// is an integer status or an object {min, max}.
func (in *instance) jsExpectedStatuses(c sobek.FunctionCall) sobek.Value {
	e := &expected{}
	for i, a := range c.Arguments {
		if o, ok := a.(*sobek.Object); ok {
			lo, okLo := integer(o.Get("min"))
			hi, okHi := integer(o.Get("max"))
			if !okLo || !okHi {
				jsmod.ThrowTypeError(in.rt, "http.expectedStatuses: argument %d is an object but its min and max are not both integers", i+1)
			}
			e.ranges = append(e.ranges, [2]int{lo, hi})
			continue
		}
		n, ok := integer(a)
		if !ok {
			what := jsmod.Describe(a)
			if sobek.IsNumber(a) {
				what = a.String()
			}
			jsmod.ThrowTypeError(in.rt, "http.expectedStatuses: argument %d must be an integer status or an object {min, max}, not %s", i+1, what)
		}
		e.codes = append(e.codes, n)
	}
	return in.rt.ToValue(e)
}

// jsSetResponseCallback is http.setResponseCallback(cb): cb comes from
// expectedStatuses, or is null to stop emitting http_req_failed.
func (in *instance) jsSetResponseCallback(c sobek.FunctionCall) sobek.Value {
	e, err := in.callbackOf(c.Argument(0))
	if err != "" {
		jsmod.ThrowTypeError(in.rt, "http.setResponseCallback: %s", err)
	}
	in.callback = e
	return sobek.Undefined()
}

// callbackOf reads a response callback value: null or undefined is none.
func (in *instance) callbackOf(v sobek.Value) (*expected, string) {
	if sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil, ""
	}
	if o, ok := v.(*sobek.Object); ok {
		if e, ok := o.Export().(*expected); ok {
			return e, ""
		}
	}
	return nil, "the response callback must be the result of http.expectedStatuses(...) or null, not " + jsmod.Describe(v)
}

// integer reads an integral number.
func integer(v sobek.Value) (int, bool) {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return 0, false
	}
	switch x := v.Export().(type) {
	case int64:
		return int(x), true
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return int(x), true
		}
	}
	return 0, false
}
