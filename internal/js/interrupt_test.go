package js_test

import (
	"strings"
	"testing"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"

	_ "github.com/metronome-load/metronome/js/modules/k6"
	_ "github.com/metronome-load/metronome/js/modules/metrics"
)

// k6/x/stopping stands for the modules whose calls return when the VU is
// stopping, as ws.connect does, and for those that measure asynchronous
// work, as http.asyncRequest does.
func init() {
	modules.Register("k6/x/stopping", modules.ModuleFunc(func(vu modules.VU) (modules.Exports, error) {
		return modules.Exports{Named: map[string]any{
			// afterStop(fn) returns to the script once the iteration's
			// context ended and then calls fn: the script runs on after
			// the stop before the runtime's interrupt lands, which it
			// otherwise does at some point after the context ends.
			"afterStop": func(fn sobek.Callable) {
				<-vu.Context().Done()
				time.Sleep(100 * time.Millisecond) // the guard's interrupt lands meanwhile
				vu.Runtime().ClearInterrupt()
				if _, err := fn(sobek.Undefined()); err != nil {
					panic(err)
				}
			},
			// recordAfterStop records, once the context ended, one
			// stopping_gated sample through the gate and one
			// stopping_measured sample past it.
			"recordAfterStop": func() {
				st := vu.State()
				<-vu.Context().Done()
				st.Recorder.Record(metrics.Sample{Metric: metricOf(st, "stopping_gated"), Tags: st.Tags, Time: time.Now(), Value: 1})
				jsmod.Measured(st).Record(metrics.Sample{Metric: metricOf(st, "stopping_measured"), Tags: st.Tags, Time: time.Now(), Value: 1})
			},
			// measure(ms, name) is work that takes ms unless the context
			// ends first; its record adds one stopping_measured sample
			// (1 answered, 0 cut off) and one stopping_gated sample, both
			// tagged name, and its promise resolves with name.
			"measure": func(ms int64, name string) sobek.Value {
				st := vu.State()
				ctx := vu.Context()
				return jsmod.AsyncMeasured(vu, func() (func(), func(*sobek.Runtime) (any, error)) {
					answered := 1.0
					select {
					case <-time.After(time.Duration(ms) * time.Millisecond):
					case <-ctx.Done():
						answered = 0
					}
					at := time.Now()
					record := func() {
						tags := st.Tags.With("name", name)
						jsmod.Measured(st).Record(metrics.Sample{Metric: metricOf(st, "stopping_measured"), Tags: tags, Time: at, Value: answered})
						st.Recorder.Record(metrics.Sample{Metric: metricOf(st, "stopping_gated"), Tags: tags, Time: at, Value: 1})
					}
					return record, func(*sobek.Runtime) (any, error) { return name, nil }
				})
			},
		}}, nil
	}))
}

// metricOf returns the counter name, registering it on first use.
func metricOf(st *modules.State, name string) *metrics.Metric {
	if m := st.Registry.Get(name); m != nil {
		return m
	}
	return st.Registry.MustNew(name, metrics.Counter, metrics.Default)
}

// An iteration that the end of its context cut off records nothing of what
// its script records after the cut, as k6 drops a sample pushed on a done
// context: not a check, a custom metric or a group's duration, even when
// the exec function then returns normally. It counts as interrupted, not
// completed, and still records its data_sent and data_received, as k6 does.
func TestInterruptDropsWhatTheScriptRecordsAfter(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
import { afterStop } from "k6/x/stopping";
import { check, group } from "k6";
import { Counter } from "k6/metrics";
const after = new Counter("after");
export default function () {
	check(1, { before: (v) => v === 1 });
	after.add(1);
	if (__ITER > 0) return;
	afterStop(() => {
		check(1, { "after the stop": (v) => v === 1 });
		after.add(10);
		group("after", () => after.add(100));
		console.log("ran on after the stop");
	});
}`}, nil)
	vu, rec := r.NewVU(t, 1)
	res := jstest.RunCut(vu, 50*time.Millisecond)
	if !strings.Contains(r.Stderr.String(), "ran on after the stop") {
		t.Fatalf("the script did not run on after the stop, so nothing was tested: %s", r.Stderr)
	}
	if res.Outcome != executor.Interrupted {
		t.Errorf("outcome %v, want Interrupted: the exec function returned only because the VU was stopping", res.Outcome)
	}
	got := jstest.Tally(rec, "name")
	want := map[string]float64{"checks": 1, "after": 1, "data_sent": 0, "data_received": 0}
	if len(got) != len(want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (recorded: %v), want %v", k, g, ok, v)
		}
	}

	// The next iteration, in a context that has not ended, records again.
	res = jstest.Iterate(vu)
	if got := jstest.Tally(rec, "name"); got["after"] != 2 || got["checks"] != 2 || res.Outcome != executor.Completed {
		t.Errorf("after the interruption, the next iteration (%v) recorded %v", res.Outcome, got)
	}
}

// What a module records once the context ended goes through the gate of
// State.Recorder, which drops it, unless the module records it past the
// gate (jsmod.Measured) because it measures work that ended before.
func TestGateAndMeasured(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
import { recordAfterStop } from "k6/x/stopping";
export default function () { recordAfterStop(); }`}, nil)
	vu, rec := r.NewVU(t, 1)
	if res := jstest.RunCut(vu, 20*time.Millisecond); res.Outcome != executor.Interrupted {
		t.Errorf("outcome %v", res.Outcome)
	}
	got := jstest.Tally(rec, "name")
	if got["stopping_measured"] != 1 || got["stopping_gated"] != 0 {
		t.Errorf("recorded %v: want the measured sample and not the gated one", got)
	}
}

// Asynchronous work that measures (jsmod.AsyncMeasured) is recorded when
// the iteration is cut off before its continuation ran: answered before
// the stop while the VU slept, or still out and cut off by it. Only its
// record runs, past the gate for what it measured; its JavaScript never
// does. Work that is not measured (a timer) runs nothing after the stop.
func TestMeasuredWorkIsRecordedWhenCutOff(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
import { measure } from "k6/x/stopping";
import { sleep } from "k6";
import { Counter } from "k6/metrics";
const after = new Counter("after");
export default async function () {
	if (__ITER === 0) {
		measure(1, "answered").then(() => after.add(1));
		measure(60000, "cut").then(() => after.add(1));
		setTimeout(() => after.add(10), 60000);
		sleep(3600);
	}
	after.add(100 * (await measure(1, "settled") === "settled"));
}`}, nil)
	vu, rec := r.NewVU(t, 1)
	start := time.Now()
	if res := jstest.RunCut(vu, 100*time.Millisecond); res.Outcome != executor.Interrupted {
		t.Errorf("outcome %v", res.Outcome)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the interrupted iteration took %v", d)
	}
	got := jstest.Tally(rec, "name")
	want := map[string]float64{"stopping_measured{name=answered}": 1, "stopping_measured{name=cut}": 0, "data_sent": 0, "data_received": 0}
	if len(got) != len(want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (recorded: %v), want %v; all: %v", k, g, ok, v, got)
		}
	}

	// Not interrupted, a measured continuation records, then settles.
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	got = jstest.Tally(rec, "name")
	if got["stopping_measured{name=settled}"] != 1 || got["stopping_gated{name=settled}"] != 1 || got["after"] != 100 {
		t.Errorf("a settled measurement recorded %v", got)
	}
}

// When a continuation throws, the call fails and the loop drops what is
// still queued; a request among them that was answered is still recorded,
// as k6 records a request when its answer comes.
func TestMeasuredWorkIsRecordedWhenTheCallFails(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `
import { measure } from "k6/x/stopping";
import { sleep } from "k6";
export default function () {
	setTimeout(() => { throw new Error("boom"); }, 1);
	measure(20, "queued behind the throw");
	sleep(0.2);
}`}, nil)
	vu, rec := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Failed {
		t.Errorf("outcome %v, want Failed", res.Outcome)
	}
	got := jstest.Tally(rec, "name")
	if got["stopping_measured{name=queued behind the throw}"] != 1 || got["stopping_gated{name=queued behind the throw}"] != 1 {
		t.Errorf("recorded %v: want the answered request's samples", got)
	}
}
