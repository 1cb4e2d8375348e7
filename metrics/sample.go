package metrics

import "time"

// Sample is one measurement: a value of a metric at a time, with tags.
// Metadata holds per-sample values that are not tags (k6's vu and iter when
// enabled); it is nil in the common case.
type Sample struct {
	Metric   *Metric
	Tags     *TagSet
	Metadata map[string]string
	Time     time.Time
	Value    float64
}

// Recorder accepts samples. The recorders handed to VUs and executors are
// per-VU buffers, so recording takes no global lock.
type Recorder interface {
	Record(s Sample)
}

// RecorderFunc adapts a function to Recorder.
type RecorderFunc func(Sample)

// Record calls f(s).
func (f RecorderFunc) Record(s Sample) { f(s) }

// Milliseconds converts a duration to k6's unit for time metrics.
func Milliseconds(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}
