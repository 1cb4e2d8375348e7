package health

import (
	"runtime"
	rtmetrics "runtime/metrics"
	"time"
)

// Runtime reads the counters of this process: CPU time from the operating
// system, scheduling latencies and collector pauses from runtime/metrics.
// Each Read costs a few microseconds and allocates nothing once the first
// reading's buckets exist; it is not safe for concurrent use.
type Runtime struct {
	samples []rtmetrics.Sample
}

// The runtime/metrics names Runtime reads.
const (
	schedLatencies = "/sched/latencies:seconds"
	gcPauseCPU     = "/cpu/classes/gc/pause:cpu-seconds"
)

// Read fills r with the process's counters now; r's slices are reused.
// The arrival counts are left as they are, for the caller to set.
func (rt *Runtime) Read(r *Reading) {
	if rt.samples == nil {
		rt.samples = []rtmetrics.Sample{{Name: schedLatencies}, {Name: gcPauseCPU}}
	}
	rtmetrics.Read(rt.samples)
	r.Procs = runtime.GOMAXPROCS(0)
	r.CPU, r.CPUKnown = processCPU()
	r.Sched, r.SchedBuckets = r.Sched[:0], nil
	if v := rt.samples[0].Value; v.Kind() == rtmetrics.KindFloat64Histogram {
		h := v.Float64Histogram()
		r.Sched = append(r.Sched, h.Counts...)
		r.SchedBuckets = h.Buckets // the runtime hands out the same bounds each time
	}
	r.GCPause = 0
	if v := rt.samples[1].Value; v.Kind() == rtmetrics.KindFloat64 && r.Procs > 0 {
		// The runtime counts each pause GOMAXPROCS times over.
		r.GCPause = time.Duration(v.Float64() / float64(r.Procs) * float64(time.Second))
	}
}
