// Package health measures the load generator itself while a test runs:
// how much of its CPU it used, how long its goroutines waited to be
// scheduled, how long the garbage collector stopped it, and how many
// arrivals started late because it woke late rather than because every VU
// was busy. A generator short of any of these adds its own delay to what
// it measures, so latency measured in such an interval is an upper bound
// on the server's (docs/metrics.md, "Generator health").
//
// A Reading holds the process's cumulative counters at one instant; the
// health of an interval is the difference of two readings (Between), so
// measuring costs one read per interval and nothing per iteration.
package health

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Period is how often a run measures the generator's health: the length
// of the intervals its generator_* samples describe.
const Period = time.Second

// Reading is the generator's cumulative counters at one instant.
type Reading struct {
	At time.Time
	// CPU is the user and system CPU time the process used so far;
	// CPUKnown is false where the platform does not tell.
	CPU      time.Duration
	CPUKnown bool
	// Procs is GOMAXPROCS: how many cores the process may use at once
	// (Go sets it from the machine's CPUs and the container's CPU limit).
	Procs int
	// Sched counts the goroutine scheduling latencies so far, the time
	// goroutines spent runnable before they ran, per bucket of
	// SchedBuckets (runtime/metrics' /sched/latencies:seconds: Sched[i]
	// counts latencies in [SchedBuckets[i], SchedBuckets[i+1]) seconds).
	// SchedBuckets is shared between readings and must not be changed.
	Sched        []uint64
	SchedBuckets []float64
	// GCPause is the time the garbage collector stopped the program so
	// far.
	GCPause time.Duration
	// Arrivals counts the open-model arrivals that started so far.
	// LateWakeup counts those that started more than the on-time
	// tolerance late although a VU was free (the generator woke late),
	// LateForVU those that were late because every VU was busy.
	Arrivals, LateWakeup, LateForVU int64
}

// Interval is the generator's health between two readings.
type Interval struct {
	From, To time.Time
	// CPU is the share of the cores the process may use (Procs) that it
	// used, 0 to 1; NaN when the platform does not tell.
	CPU float64
	// SchedP99 and SchedMax are the 99th percentile and the largest
	// goroutine scheduling latency of the interval, each the upper bound
	// of the runtime's histogram bucket that holds it; 0 when nothing
	// was scheduled.
	SchedP99, SchedMax time.Duration
	// GCPause is the time the garbage collector stopped the program.
	GCPause time.Duration
	// Procs is GOMAXPROCS at the interval's end.
	Procs int
	// Arrivals, LateWakeup and LateForVU count the interval's arrivals
	// as Reading does.
	Arrivals, LateWakeup, LateForVU int64
}

// Between returns the health of the interval from a to b, two readings of
// one process with a taken first.
func Between(a, b *Reading) Interval {
	iv := Interval{
		From: a.At, To: b.At, CPU: math.NaN(),
		GCPause:    max(b.GCPause-a.GCPause, 0),
		Procs:      b.Procs,
		Arrivals:   max(b.Arrivals-a.Arrivals, 0),
		LateWakeup: max(b.LateWakeup-a.LateWakeup, 0),
		LateForVU:  max(b.LateForVU-a.LateForVU, 0),
	}
	if span := b.At.Sub(a.At); a.CPUKnown && b.CPUKnown && span > 0 && b.Procs > 0 {
		iv.CPU = float64(max(b.CPU-a.CPU, 0)) / (float64(span) * float64(b.Procs))
	}
	iv.SchedP99, iv.SchedMax = schedQuantiles(a, b)
	return iv
}

// schedQuantiles returns the 99th percentile and the maximum of the
// scheduling latencies counted between a and b.
func schedQuantiles(a, b *Reading) (p99, top time.Duration) {
	if len(b.Sched) == 0 || len(b.SchedBuckets) != len(b.Sched)+1 {
		return 0, 0
	}
	delta := func(i int) uint64 {
		if i < len(a.Sched) && a.Sched[i] <= b.Sched[i] {
			return b.Sched[i] - a.Sched[i]
		}
		return b.Sched[i]
	}
	var total uint64
	last := -1
	for i := range b.Sched {
		if d := delta(i); d > 0 {
			total += d
			last = i
		}
	}
	if total == 0 {
		return 0, 0
	}
	rank := uint64(math.Ceil(0.99 * float64(total)))
	var seen uint64
	p := last
	for i := range b.Sched {
		seen += delta(i)
		if seen >= rank {
			p = i
			break
		}
	}
	return bucketTop(b.SchedBuckets, p), bucketTop(b.SchedBuckets, last)
}

// bucketTop is the upper bound of bucket i, or its lower bound for the
// last bucket, which is open.
func bucketTop(bounds []float64, i int) time.Duration {
	v := bounds[i+1]
	if math.IsInf(v, 1) {
		v = bounds[i]
	}
	return time.Duration(v * float64(time.Second))
}

// The limits past which an interval counts as one in which the generator
// may have inflated what it measured (see Limited).
const (
	// CPUBound is the share of its cores past which the process is
	// CPU-bound: Locust warns at 90 %, Hyperfoil logs at 80 %.
	CPUBound = 0.9
	// SchedDelay is the goroutine scheduling latency (p99) past which
	// responses waited noticeably to be read.
	SchedDelay = 5 * time.Millisecond
	// GCPauseShare is the share of an interval the collector may stop
	// the program for.
	GCPauseShare = 0.05
	// LateWakeupShare is the share of arrivals that may start late for
	// want of the generator (Perf Analyzer warns at 1 % of requests over
	// 1 ms late); LateWakeupMin is the fewest late arrivals that count.
	LateWakeupShare = 0.01
	LateWakeupMin   = 5
)

// Reason says why the generator may have inflated an interval's latency.
// Reasons combine as bits.
type Reason uint8

// The reasons.
const (
	// ReasonCPU: the process used at least CPUBound of its cores.
	ReasonCPU Reason = 1 << iota
	// ReasonSched: goroutines waited SchedDelay or more (p99) to run.
	ReasonSched
	// ReasonGC: the collector stopped the program for GCPauseShare of
	// the interval or more.
	ReasonGC
	// ReasonWakeup: at least LateWakeupShare of the arrivals (and
	// LateWakeupMin) started late though a VU was free.
	ReasonWakeup
)

// Reasons are the single reasons, in the order they are listed.
var Reasons = []Reason{ReasonCPU, ReasonSched, ReasonGC, ReasonWakeup}

var reasonText = map[Reason]string{
	ReasonCPU:    "CPU-bound",
	ReasonSched:  "slow to schedule goroutines",
	ReasonGC:     "paused by the garbage collector",
	ReasonWakeup: "late to start arrivals",
}

// String lists the reasons in words: "CPU-bound, late to start arrivals".
func (r Reason) String() string {
	var parts []string
	for _, one := range Reasons {
		if r&one != 0 {
			parts = append(parts, reasonText[one])
		}
	}
	if len(parts) == 0 {
		return "healthy"
	}
	return strings.Join(parts, ", ")
}

// ParseReason reads a single reason as String writes it.
func ParseReason(s string) (Reason, bool) {
	for _, r := range Reasons {
		if reasonText[r] == s {
			return r, true
		}
	}
	return 0, false
}

// Limited returns why the generator may have inflated the latency it
// measured in the interval, 0 when nothing suggests it did.
func (iv Interval) Limited() Reason {
	var r Reason
	if iv.CPU >= CPUBound {
		r |= ReasonCPU
	}
	if iv.SchedP99 >= SchedDelay {
		r |= ReasonSched
	}
	if span := iv.To.Sub(iv.From); span > 0 && float64(iv.GCPause) >= GCPauseShare*float64(span) {
		r |= ReasonGC
	}
	if iv.LateWakeup >= LateWakeupMin && float64(iv.LateWakeup) >= LateWakeupShare*float64(iv.Arrivals) {
		r |= ReasonWakeup
	}
	return r
}

// LateWakeupRate is the share of the interval's arrivals that started late
// though a VU was free, 0 without arrivals.
func (iv Interval) LateWakeupRate() float64 { return share(iv.LateWakeup, iv.Arrivals) }

// LateForVURate is the share of the interval's arrivals that started late
// because every VU was busy, 0 without arrivals.
func (iv Interval) LateForVURate() float64 { return share(iv.LateForVU, iv.Arrivals) }

func share(n, of int64) float64 {
	if of <= 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// String is a one-line account: "cpu 42%, sched p99 0.3ms, gc 1.2ms,
// late 0.0% (wake-up) 3.1% (no VU)".
func (iv Interval) String() string {
	cpu := "cpu n/a"
	if !math.IsNaN(iv.CPU) {
		cpu = fmt.Sprintf("cpu %.0f%%", 100*iv.CPU)
	}
	return fmt.Sprintf("%s, sched p99 %s, gc pauses %s, late %.1f%% (wake-up) %.1f%% (no VU)",
		cpu, ms(iv.SchedP99), ms(iv.GCPause), 100*iv.LateWakeupRate(), 100*iv.LateForVURate())
}

// ms writes a duration in milliseconds with one decimal.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}
