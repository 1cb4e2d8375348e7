//go:build unix

package result

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// BenchmarkIntervalAtCap is the cost of writing one interval's line at
// the series cap: 10,000 series of http_req_duration (a URL each), each
// with 1 to 5 latencies (exponential, mean 20 ms) in the interval. It is
// what the output's goroutine spends per interval on top of taking the
// samples in, and must stay a small part of the interval (1 s by
// default) of one core. cpu-ns/op is the process's CPU time over the
// writes, the garbage collector's included, which a loaded machine
// stretches less than the wall time; bytes/op is the line's length.
func BenchmarkIntervalAtCap(b *testing.B) {
	reg := metrics.NewRegistry()
	bi := metrics.RegisterBuiltin(reg)
	out, err := New(output.Params{Arg: "unused.result", Registry: reg})
	if err != nil {
		b.Fatal(err)
	}
	o := out.(*Output)
	var written counter
	o.buf = bufio.NewWriterSize(&written, 64<<10)
	o.header.Started = time.Unix(1_700_000_000, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	at := o.header.Started.Add(100 * time.Millisecond)
	var samples []metrics.Sample
	var ids []int
	for k := range DefaultMaxSeries {
		tags := metrics.EmptyTags.With("scenario", "default").With("url", fmt.Sprintf("http://127.0.0.1:8080/item/%d", k))
		for range 1 + k%5 {
			samples = append(samples, metrics.Sample{Metric: bi.HTTPReqDuration, Tags: tags, Time: at, Value: rng.ExpFloat64() * 20})
			ids = append(ids, o.seriesOf(bi.HTTPReqDuration, tags).id)
		}
	}
	fill := func() {
		iv := o.intervalAt(at, at.UnixNano())
		for i := range samples {
			o.add(iv, ids[i], &samples[i], at.UnixNano())
		}
		o.written = 0
	}
	fill()
	o.writeClosed(time.Time{})
	line := written
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		fill()
		c0 := cpuTime()
		b.StartTimer()
		o.writeClosed(time.Time{})
		b.StopTimer()
		cpu += cpuTime() - c0
		b.StartTimer()
	}
	b.StopTimer()
	if o.err != nil {
		b.Fatal(o.err)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(written-line)/float64(b.N), "bytes/op")
}

// counter is a writer that counts the bytes written to it.
type counter int64

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}

// BenchmarkIngestAtCap is the cost of taking in one sample at the series
// cap, as the engine hands them over: batches in which each request's
// samples (its timings, http_reqs, http_req_failed) share one tag set,
// over 1,000 URLs, 10 series each, each series getting one value an
// interval.
func BenchmarkIngestAtCap(b *testing.B) {
	reg := metrics.NewRegistry()
	bi := metrics.RegisterBuiltin(reg)
	out, err := New(output.Params{Arg: "unused.result", Registry: reg})
	if err != nil {
		b.Fatal(err)
	}
	o := out.(*Output)
	o.buf = bufio.NewWriterSize(io.Discard, 64<<10)
	o.header.Started = time.Unix(1_700_000_000, 0)
	at := o.header.Started.Add(100 * time.Millisecond)
	ms := []*metrics.Metric{bi.HTTPReqDuration, bi.HTTPReqWaiting, bi.HTTPReqBlocked, bi.HTTPReqConnecting,
		bi.HTTPReqSending, bi.HTTPReqReceiving, bi.HTTPReqTLSHandshaking, bi.HTTPReqs, bi.HTTPReqFailed, bi.DataReceived}
	rng := rand.New(rand.NewPCG(3, 4))
	var batch []metrics.Sample
	for k := range 1000 {
		u := fmt.Sprintf("http://127.0.0.1:8080/item/%d", k)
		tags := metrics.EmptyTags.With("scenario", "default").With("url", u).With("name", u).With("method", "GET").With("status", "200")
		for _, m := range ms {
			batch = append(batch, metrics.Sample{Metric: m, Tags: tags, Time: at, Value: rng.ExpFloat64() * 20})
		}
	}
	o.ingest(batch) // defines the series
	o.writeClosed(time.Time{})
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		c0 := cpuTime()
		o.ingest(batch)
		cpu += cpuTime() - c0
		b.StopTimer()
		o.written = 0 // the next batch goes to the same interval, written afresh
		o.writeClosed(time.Time{})
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/sample")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*len(batch)), "cpu-ns/sample")
}

// cpuTime is the user plus system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
