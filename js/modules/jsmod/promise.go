package jsmod

import (
	"bytes"
	"sync/atomic"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
)

// Promise is a JavaScript promise that Go settles later. Making one
// reserves a place in the VU's event loop, so the iteration waits for it;
// Resolve or Reject, called exactly once from any goroutine, settles it on
// the VU's goroutine.
type Promise struct {
	rt      *sobek.Runtime
	promise *sobek.Promise
	resolve func(any) error
	reject  func(any) error
	queue   func(func() error)
	// where is the script's call stack when the promise was made: a
	// rejection made later on the event loop points there.
	where []sobek.StackFrame
	done  atomic.Bool
}

// NewPromise makes a promise of the VU's runtime; call it on the VU's
// goroutine, from a Go function that JavaScript called.
func NewPromise(vu modules.VU) *Promise {
	rt := vu.Runtime()
	p, resolve, reject := rt.NewPromise()
	return &Promise{
		rt: rt, promise: p, resolve: resolve, reject: reject,
		queue: vu.RegisterCallback(),
		where: rt.CaptureCallStack(0, nil),
	}
}

// Value is the promise for JavaScript.
func (p *Promise) Value() sobek.Value { return p.rt.ToValue(p.promise) }

// Resolve settles the promise with what value returns; value runs on the
// VU's goroutine, where JavaScript values can be made. When value returns
// an error the promise is rejected with it instead.
func (p *Promise) Resolve(value func(rt *sobek.Runtime) (any, error)) {
	if p.done.Swap(true) {
		panic("jsmod: promise settled twice")
	}
	p.queue(func() error {
		v, err := value(p.rt)
		if err != nil {
			return p.reject(p.errorValue(err))
		}
		return p.resolve(v)
	})
}

// Reject settles the promise as rejected with err, made into a JavaScript
// error as NewError does; its stack points at the script's call that made
// the promise. A JavaScript exception rejects with its own value.
func (p *Promise) Reject(err error) {
	if p.done.Swap(true) {
		panic("jsmod: promise settled twice")
	}
	p.queue(func() error { return p.reject(p.errorValue(err)) })
}

// errorValue is the JavaScript value a promise is rejected with.
func (p *Promise) errorValue(err error) sobek.Value {
	if ex, ok := err.(*sobek.Exception); ok {
		return ex.Value()
	}
	o := NewError(p.rt, err)
	var b bytes.Buffer
	for i := range p.where {
		f := &p.where[i]
		if f.SrcName() == "<native>" || f.Position().Filename == "" {
			continue
		}
		b.WriteString("\n\tat ")
		f.Write(&b)
	}
	if b.Len() > 0 {
		_ = o.Set("stack", o.String()+b.String())
	}
	return o
}

// Async runs work on a goroutine of its own and returns a promise that
// settles with its outcome: work must not touch JavaScript values; the
// function it returns makes the resolved value on the VU's goroutine.
func Async(vu modules.VU, work func() (func(rt *sobek.Runtime) (any, error), error)) sobek.Value {
	p := NewPromise(vu)
	go func() {
		value, err := work()
		if err != nil {
			p.Reject(err)
			return
		}
		p.Resolve(value)
	}()
	return p.Value()
}

// AsyncMeasured is Async for work that measures something, a request:
// work runs on a goroutine of its own, with a context that ends when the
// iteration is interrupted, and returns record, which records what it
// measured (through Measured and State.Recorder, running no JavaScript),
// and value, which makes the resolved value or the rejection. Both run on
// the VU's goroutine, record first. When the iteration is interrupted
// before they ran, the VU still waits briefly for work to return and runs
// record alone, so that a request answered before the interruption is
// recorded and one cut off by it is charged (RecordInterrupted).
func AsyncMeasured(vu modules.VU, work func() (record func(), value func(rt *sobek.Runtime) (any, error))) sobek.Value {
	rt := vu.Runtime()
	p, resolve, reject := rt.NewPromise()
	pr := &Promise{rt: rt, promise: p, resolve: resolve, reject: reject, where: rt.CaptureCallStack(0, nil)}
	var queue func(record func(), f func() error)
	if m, ok := vu.(modules.MeasuringVU); ok {
		queue = m.RegisterMeasured()
	} else {
		plain := vu.RegisterCallback()
		queue = func(record func(), f func() error) {
			plain(func() error {
				record()
				return f()
			})
		}
	}
	go func() {
		record, value := work()
		queue(record, func() error {
			v, err := value(rt)
			if err != nil {
				return pr.reject(pr.errorValue(err))
			}
			return pr.resolve(v)
		})
	}()
	return pr.Value()
}

// Settled returns a promise already settled when it is made: rejected
// with err made into a JavaScript error as NewError does, or, when err is
// nil, resolved with v. It is for an outcome known at once, and needs no
// place in the event loop; NewPromise is for one that comes later.
func Settled(rt *sobek.Runtime, v any, err error) sobek.Value {
	p, resolve, reject := rt.NewPromise()
	switch e := err.(type) {
	case nil:
		_ = resolve(v)
	case *sobek.Exception:
		_ = reject(e.Value())
	default:
		_ = reject(NewError(rt, err))
	}
	return rt.ToValue(p)
}
