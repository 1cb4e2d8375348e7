// Package k6 implements the "k6" module: check, group, sleep, fail and
// randomSeed.
package k6

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/internal/ctxwatch"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

func init() {
	modules.Register("k6", modules.ModuleFunc(New))
}

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	m := &module{vu: vu}
	return modules.Exports{Named: map[string]any{
		"check":      m.check,
		"group":      m.group,
		"sleep":      m.sleepFunc(),
		"fail":       m.fail,
		"randomSeed": m.randomSeed,
	}}, nil
}

type module struct {
	vu  modules.VU
	nap napper
}

func (m *module) state(fn string) *modules.State {
	st := m.vu.State()
	if st == nil {
		jsmod.Throwf(m.vu.Runtime(), "%s can only be used in VU code (exec functions, setup and teardown), not in the init context", fn)
	}
	return st
}

// check(val, sets, tags?) evaluates each named check against val and
// records one checks sample per check, tagged with its name. A check is a
// function of val or a plain value; a function that throws counts as
// failed and the exception continues once its sample is recorded.
func (m *module) check(call sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	st := m.state("check()")
	val := call.Argument(0)
	sets, ok := call.Argument(1).(*sobek.Object)
	if !ok {
		jsmod.Throwf(rt, "check() needs an object of named checks as its second argument")
	}
	tags := st.Tags
	if t, ok := call.Argument(2).(*sobek.Object); ok {
		for _, k := range t.Keys() {
			tags = tags.With(k, t.Get(k).String())
		}
	}
	withName := st.SystemTags["check"]
	all := true
	for _, name := range sets.Keys() {
		if strings.Contains(name, "::") {
			jsmod.Throwf(rt, "check names may not contain '::' (%q)", name)
		}
		item := sets.Get(name)
		pass := false
		var thrown error
		if fn, ok := sobek.AssertFunction(item); ok {
			r, err := fn(sobek.Undefined(), val)
			switch {
			case err != nil:
				thrown = err
			case isPromise(r):
				jsmod.Throwf(rt, "check %q returned a promise: check() does not support async functions", name)
			default:
				pass = r.ToBoolean()
			}
		} else {
			pass = item.ToBoolean()
		}
		ct := tags
		if withName {
			ct = tags.With("check", name)
		}
		v := 0.0
		if pass {
			v = 1
		}
		st.Recorder.Record(metrics.Sample{Metric: st.Builtin.Checks, Tags: ct, Time: time.Now(), Value: v})
		if thrown != nil {
			jsmod.Throw(rt, thrown)
		}
		if !pass {
			all = false
		}
	}
	return rt.ToValue(all)
}

func isPromise(v sobek.Value) bool {
	o, ok := v.(*sobek.Object)
	return ok && o.ExportType() == typePromise
}

var typePromise = reflect.TypeOf((*sobek.Promise)(nil))

// group(name, fn) runs fn with the group path extended by name (and the
// group tag set to it) and records group_duration.
func (m *module) group(call sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	st := m.state("group()")
	name := call.Argument(0).String()
	if strings.Contains(name, "::") {
		jsmod.Throwf(rt, "group names may not contain '::' (%q)", name)
	}
	fn, ok := sobek.AssertFunction(call.Argument(1))
	if !ok {
		jsmod.Throwf(rt, "group(%q, fn) needs a function as its second argument", name)
	}
	parent, parentTags := st.Group, st.Tags
	st.Group = parent + "::" + name
	if st.SystemTags["group"] {
		st.Tags = parentTags.With("group", st.Group)
	}
	tags := st.Tags
	start := time.Now()
	ret, err := fn(sobek.Undefined())
	end := time.Now()
	st.Group, st.Tags = parent, parentTags
	if err == nil && isPromise(ret) {
		jsmod.Throwf(rt, "group(%q) does not support async functions: the group would end before the function's promise settles", name)
	}
	st.Recorder.Record(metrics.Sample{Metric: st.Builtin.GroupDuration, Tags: tags, Time: end,
		Value: metrics.Milliseconds(end.Sub(start))})
	if err != nil {
		jsmod.Throw(rt, err)
	}
	return ret
}

// sleep returns sleep(seconds), which pauses the VU. When the iteration
// is interrupted meanwhile, the script stops right there rather than
// running on until the runtime notices. An idle VU waits in here, and
// every byte of frame under the wait counts towards the 4 KB its
// goroutine's stack must stay within (docs/performance.md): so it is a
// closure rather than the method value, whose wrapper would be one more
// frame, and its work is this one frame and the napper's.
func (m *module) sleepFunc() func(sobek.FunctionCall) sobek.Value {
	return func(call sobek.FunctionCall) sobek.Value {
		secs := call.Argument(0).ToFloat()
		if !(secs > 0) {
			return sobek.Undefined()
		}
		ctx := m.vu.Context()
		// While the VU sleeps its sample buffer is lent out, so that what
		// the iteration recorded so far reaches thresholds and outputs now
		// rather than when the iteration ends.
		park := m.parker()
		if park != nil {
			park.Park()
		}
		slept := m.nap.sleep(ctx, time.Duration(secs*float64(time.Second)))
		if park != nil {
			park.Unpark()
		}
		if !slept {
			m.vu.Runtime().Interrupt(ctx.Err())
		}
		return sobek.Undefined()
	}
}

// parker is the VU's recorder when it can lend out its buffer, else nil.
// It is not inlined, to keep its temporaries out of sleep's frame.
//
//go:noinline
func (m *module) parker() metrics.Parker {
	if st := m.vu.State(); st != nil {
		park, _ := st.Recorder.(metrics.Parker)
		return park
	}
	return nil
}

// napper is a VU's sleep: one timer, reused by every call, that the end
// of the VU's context fires early. A VU's goroutine spends its idle time
// blocked here, at the bottom of the JavaScript call, and every byte below
// the script counts towards the 4 KB its stack must stay within
// (docs/performance.md): so the wait is a plain receive on the timer
// rather than a select on the timer and the context (the select's frame
// grew an idle VU's stack to 8 KB), and little deeper than that receive
// runs on the VU's goroutine. The timer is made by the first sleep (made
// with the module, it cost every VU that never sleeps 270 bytes); the
// context watch is registered by a goroutine of its own, once per
// context, which the sleep does not wait for: the wait for it (a
// semaphore's) was the deepest point of a first sleep and grew the stacks
// of 3-6 % of idle VUs (a runtime traced every growth). Reusing the timer
// also saves an allocation per sleep.
type napper struct {
	t    *time.Timer
	done <-chan struct{} // the Done of the context of the last watch asked for
	gen  uint32          // how many watches were asked for

	// Set by the watch goroutines, under mu.
	mu    sync.Mutex
	armed uint32 // the gen of the watch in place
	h     ctxwatch.Handle
}

// sleep blocks for d, returning early with false when ctx ends.
func (n *napper) sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	until := time.Now().Add(d)
	if n.t == nil {
		n.t = time.NewTimer(d)
	} else {
		n.t.Reset(d)
	}
	// Contexts that share a Done end together (a context that can never
	// end has none), so one watch serves them all.
	if done := ctx.Done(); done != n.done {
		n.done = done
		n.gen++
		go n.watch(ctx, n.gen)
	}
	for {
		if ctx.Err() != nil {
			// It ended before its watch was in place, or before the
			// watch could see the timer's Reset.
			n.t.Reset(0)
		}
		<-n.t.C
		if ctx.Err() != nil {
			return false
		}
		// An early fire can come from the watch of the previous context,
		// ending just as it was replaced: sleep out the rest.
		rest := time.Until(until)
		if rest <= 0 {
			return true
		}
		n.t.Reset(rest)
	}
}

// watch makes the end of ctx fire the timer at once, in place of the
// previous context's watch, unless a later context's watch (gen is the
// order they were asked for in) is in place already. It runs on a
// goroutine of its own: registering the watch would be the deepest call a
// sleeping VU made. Every VU's napper shares one watch of the context
// (ctxwatch), where each used to register a context.AfterFunc of its own.
func (n *napper) watch(ctx context.Context, gen uint32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if gen < n.armed {
		return
	}
	n.armed = gen
	n.h.Watch(ctx, n)
}

// Wake fires the timer at once: the context watched has ended.
func (n *napper) Wake() { n.t.Reset(0) }

// fail(msg) throws an Error with msg, ending the iteration as failed.
func (m *module) fail(call sobek.FunctionCall) sobek.Value {
	msg := ""
	if a := call.Argument(0); !sobek.IsUndefined(a) {
		msg = a.String()
	}
	jsmod.Throwf(m.vu.Runtime(), "%s", msg)
	return nil
}

// randomSeed(n) makes Math.random of this VU repeatable.
func (m *module) randomSeed(call sobek.FunctionCall) sobek.Value {
	seed := call.Argument(0).ToInteger()
	r := rand.New(rand.NewPCG(uint64(seed), 0x6d657472))
	m.vu.Runtime().SetRandSource(r.Float64)
	return sobek.Undefined()
}
