package health_test

import (
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/health"
)

// bounds are runtime-style bucket bounds in seconds: 0, 1ms, 2ms, 4ms,
// 8ms, +Inf.
var bounds = []float64{0, 0.001, 0.002, 0.004, 0.008, math.Inf(1)}

func reading(at time.Duration, cpu time.Duration, sched []uint64, gc time.Duration) health.Reading {
	return health.Reading{At: time.Unix(0, 0).Add(at), CPU: cpu, CPUKnown: true, Procs: 2,
		Sched: sched, SchedBuckets: bounds, GCPause: gc}
}

func TestBetween(t *testing.T) {
	a := reading(0, 3*time.Second, []uint64{10, 0, 0, 0, 0}, 10*time.Millisecond)
	a.Arrivals, a.LateWakeup, a.LateForVU = 1000, 5, 7
	b := reading(time.Second, 4500*time.Millisecond, []uint64{109, 0, 1, 0, 0}, 30*time.Millisecond)
	b.Arrivals, b.LateWakeup, b.LateForVU = 1200, 9, 57
	iv := health.Between(&a, &b)
	// 1.5 s of CPU in 1 s on 2 cores.
	if iv.CPU != 0.75 {
		t.Errorf("CPU = %v, want 0.75", iv.CPU)
	}
	// 100 latencies: 99 below 1 ms, one in [2 ms, 4 ms): the 99th is in
	// the first bucket, the largest in the third; each read as its top.
	if iv.SchedP99 != time.Millisecond || iv.SchedMax != 4*time.Millisecond {
		t.Errorf("sched p99 %v max %v, want 1ms and 4ms", iv.SchedP99, iv.SchedMax)
	}
	if iv.GCPause != 20*time.Millisecond {
		t.Errorf("GCPause = %v, want 20ms", iv.GCPause)
	}
	if iv.Arrivals != 200 || iv.LateWakeup != 4 || iv.LateForVU != 50 {
		t.Errorf("arrivals %d, late %d + %d", iv.Arrivals, iv.LateWakeup, iv.LateForVU)
	}
	if iv.LateWakeupRate() != 0.02 || iv.LateForVURate() != 0.25 {
		t.Errorf("rates %v %v", iv.LateWakeupRate(), iv.LateForVURate())
	}
	// Four late wake-ups are fewer than LateWakeupMin: healthy.
	if r := iv.Limited(); r != 0 {
		t.Errorf("Limited = %v, want healthy", r)
	}
	if s := iv.String(); s != "cpu 75%, sched p99 1.0ms, gc pauses 20.0ms, late 2.0% (wake-up) 25.0% (no VU)" {
		t.Errorf("String = %q", s)
	}
}

// A latency in the open top bucket reads as the bucket's lower bound;
// no latency at all reads as 0; an unknown CPU is NaN.
func TestBetweenEdges(t *testing.T) {
	a := reading(0, 0, []uint64{0, 0, 0, 0, 0}, 0)
	b := reading(time.Second, 0, []uint64{0, 0, 0, 0, 3}, 0)
	if iv := health.Between(&a, &b); iv.SchedP99 != 8*time.Millisecond || iv.SchedMax != 8*time.Millisecond {
		t.Errorf("top bucket: p99 %v max %v, want 8ms", iv.SchedP99, iv.SchedMax)
	}
	if iv := health.Between(&a, &a); iv.SchedP99 != 0 || iv.SchedMax != 0 {
		t.Errorf("nothing scheduled: %v %v", iv.SchedP99, iv.SchedMax)
	}
	b.CPUKnown = false
	if iv := health.Between(&a, &b); !math.IsNaN(iv.CPU) || iv.Limited()&health.ReasonCPU != 0 {
		t.Errorf("unknown CPU = %v", iv.CPU)
	}
}

func TestLimited(t *testing.T) {
	base := health.Interval{From: time.Unix(0, 0), To: time.Unix(1, 0), Arrivals: 1000}
	for _, c := range []struct {
		name string
		edit func(*health.Interval)
		want health.Reason
	}{
		{"healthy", func(*health.Interval) {}, 0},
		{"cpu", func(iv *health.Interval) { iv.CPU = 0.95 }, health.ReasonCPU},
		{"cpu below", func(iv *health.Interval) { iv.CPU = 0.89 }, 0},
		{"sched", func(iv *health.Interval) { iv.SchedP99 = health.SchedDelay }, health.ReasonSched},
		{"gc", func(iv *health.Interval) { iv.GCPause = 50 * time.Millisecond }, health.ReasonGC},
		{"gc below", func(iv *health.Interval) { iv.GCPause = 49 * time.Millisecond }, 0},
		{"wake-ups", func(iv *health.Interval) { iv.LateWakeup = 10 }, health.ReasonWakeup},
		{"wake-ups below", func(iv *health.Interval) { iv.LateWakeup = 9 }, 0},
		{"late for VU is the backlog, not the generator", func(iv *health.Interval) { iv.LateForVU = 900 }, 0},
		{"two", func(iv *health.Interval) { iv.CPU, iv.LateWakeup = 1, 100 }, health.ReasonCPU | health.ReasonWakeup},
	} {
		iv := base
		c.edit(&iv)
		if got := iv.Limited(); got != c.want {
			t.Errorf("%s: Limited = %v, want %v", c.name, got, c.want)
		}
	}
	if s := (health.ReasonCPU | health.ReasonWakeup).String(); s != "CPU-bound, late to start arrivals" {
		t.Errorf("String = %q", s)
	}
}

// fakeSource adds one second of CPU time and ten scheduling latencies
// per read.
type fakeSource struct {
	mu    sync.Mutex
	reads int
}

func (f *fakeSource) Read(r *health.Reading) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	r.CPU, r.CPUKnown, r.Procs = time.Duration(f.reads)*time.Second, true, 1
	r.Sched = append(r.Sched[:0], uint64(10*f.reads), 0, 0, 0, 0)
	r.SchedBuckets = bounds
}

// Tick reports the interval since the previous tick, on whatever grid the
// caller's loop keeps; the first tick only reads. In virtual time the
// intervals are exact.
func TestMonitorTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &fakeSource{}
		var n int64
		m := health.NewMonitor(clock.Real, src, func() (int64, int64, int64) { n += 100; return n, n / 10, 0 })
		start := time.Now()
		if _, ok := m.Tick(); ok {
			t.Fatal("the first tick reported an interval")
		}
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		var got []health.Interval
		for range 3 {
			<-tk.C
			iv, ok := m.Tick()
			if !ok {
				t.Fatal("a tick reported nothing")
			}
			got = append(got, iv)
		}
		time.Sleep(250 * time.Millisecond)
		last, _ := m.Tick()
		got = append(got, last)
		if _, ok := m.Tick(); ok {
			t.Error("a tick at the same instant reported an interval")
		}
		want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3250 * time.Millisecond}
		for i, iv := range got {
			if iv.To.Sub(start) != want[i] || iv.Arrivals != 100 || iv.LateWakeup != 10 {
				t.Errorf("interval %d: to %v, %d arrivals, %d late; want to %v, 100 and 10", i, iv.To.Sub(start), iv.Arrivals, iv.LateWakeup, want[i])
			}
		}
		// One second of CPU per read, on one core.
		if got[0].CPU != 1 || got[3].CPU != 4 {
			t.Errorf("CPU shares %v and %v, want 1 and 4", got[0].CPU, got[3].CPU)
		}
		// A reading for a span is the counters now.
		if r := m.Reading(); !r.At.Equal(time.Now()) || r.CPU != 7*time.Second || len(r.Sched) != 5 {
			t.Errorf("reading at %v: CPU %v, %d buckets", r.At.Sub(start), r.CPU, len(r.Sched))
		}
	})
}

// The real source reads plausible counters.
func TestRuntimeRead(t *testing.T) {
	var rt health.Runtime
	var a, b health.Reading
	rt.Read(&a)
	a.At = time.Now()
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	rt.Read(&b)
	b.At = time.Now()
	if a.Procs < 1 || len(b.Sched) == 0 || len(b.SchedBuckets) != len(b.Sched)+1 {
		t.Fatalf("reading: procs %d, %d sched buckets, %d bounds", a.Procs, len(b.Sched), len(b.SchedBuckets))
	}
	iv := health.Between(&a, &b)
	if b.CPUKnown && (iv.CPU <= 0 || iv.CPU > 1.5) {
		t.Errorf("CPU share of a busy loop = %v", iv.CPU)
	}
}

// A tick costs about a microsecond and, after the first, no allocation:
// it runs once per interval, never per iteration.
func BenchmarkMonitorTick(b *testing.B) {
	m := health.NewMonitor(clock.Real, &health.Runtime{}, nil)
	m.Tick()
	b.ReportAllocs()
	for b.Loop() {
		m.Tick()
	}
}

// A tally counts intervals by reason and keeps the extremes; tallies of
// instances merge into the tally of their intervals together.
func TestTally(t *testing.T) {
	sec := func(s int) (time.Time, time.Time) { return time.Unix(int64(s), 0), time.Unix(int64(s+1), 0) }
	var ivs []health.Interval
	for s, cpu := range []float64{0.2, 0.95, math.NaN(), 0.5} {
		from, to := sec(s)
		ivs = append(ivs, health.Interval{From: from, To: to, CPU: cpu, Procs: 2, SchedP99: time.Duration(s) * 3 * time.Millisecond,
			Arrivals: 100, LateWakeup: int64(5 * s), LateForVU: 1})
	}
	var all, a, b health.Tally
	for i, iv := range ivs {
		all.Add(iv)
		if i < 2 {
			a.Add(iv)
		} else {
			b.Add(iv)
		}
	}
	// Second 1: CPU-bound and 5 late wake-ups; 2: 10 late wake-ups and
	// 6 ms of scheduling; 3: 15 late and 9 ms.
	if all.Intervals != 4 || all.Limited != 3 || all.ByReason[health.ReasonCPU] != 1 || all.ByReason[health.ReasonWakeup] != 3 ||
		all.ByReason[health.ReasonSched] != 2 || all.MaxCPU != 0.95 || all.MaxSched != 9*time.Millisecond ||
		all.Arrivals != 400 || all.LateWakeup != 30 || all.LateForVU != 4 || all.Procs != 2 {
		t.Errorf("tally %+v", all)
	}
	var merged health.Tally
	merged.Merge(b)
	merged.Merge(a)
	merged.Merge(health.Tally{})
	if merged.Intervals != all.Intervals || merged.Limited != all.Limited || merged.MaxCPU != all.MaxCPU ||
		merged.ByReason[health.ReasonWakeup] != 3 || merged.LateWakeup != all.LateWakeup {
		t.Errorf("merged %+v, want %+v", merged, all)
	}
	for _, r := range health.Reasons {
		if back, ok := health.ParseReason(r.String()); !ok || back != r {
			t.Errorf("ParseReason(%q) = %v, %v", r, back, ok)
		}
	}
	if _, ok := health.ParseReason("healthy"); ok {
		t.Error("ParseReason took a word that is no reason")
	}
}
