package result_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/output/result"
)

// Two instances of one test each ran half of it (--execution-segment
// 0:1/2 and 1/2:1) and wrote a result file. Read reads each into its
// series' totals; Union checks that they are one test's instances that
// cover it whole, and orders them by segment. The sum of the two files'
// sinks is the sink of the whole run's samples.
func ExampleUnion() {
	dir, err := os.MkdirTemp("", "result-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	var files []*result.File
	for i, seg := range []string{"1/2:1", "0:1/2"} {
		path := filepath.Join(dir, fmt.Sprintf("instance-%d.result", i))
		write(path, seg, 10*(i+1))
		fh, err := os.Open(path)
		if err != nil {
			panic(err)
		}
		f, err := result.Read(fh, filepath.Base(path))
		fh.Close()
		if err != nil {
			panic(err)
		}
		files = append(files, f)
	}
	ordered, err := result.Union(files)
	if err != nil {
		panic(err)
	}
	total := metrics.NewTrendSink()
	for _, f := range ordered {
		for _, s := range f.Series {
			tr := s.Sink.(*metrics.TrendSink)
			fmt.Printf("%s (segment %s): %s count=%d max=%g\n", f.Name, f.Header.Segment, s.Metric.Name, tr.Count(), tr.Max())
			total.Merge(tr)
		}
	}
	fmt.Printf("the test: count=%d max=%g\n", total.Count(), total.Max())

	files[0].Header.Segment = "0:1/2"
	_, err = result.Union(files)
	fmt.Println(err)
	// Output:
	// instance-1.result (segment 0:1/2): http_req_duration count=20 max=20
	// instance-0.result (segment 1/2:1): http_req_duration count=10 max=10
	// the test: count=30 max=20
	// instance-0.result (segment 0:1/2) and instance-1.result (segment 0:1/2) overlap: each part of the test must come from one file, so one was given twice or comes from another run
}

// write runs the result output over n requests of 1, 2, … n ms, as the
// instance running segment seg of a test writes them.
func write(path, seg string, n int) {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	options := fmt.Sprintf(`{"executionSegment":%q,"executionSegmentSequence":"0,1/2,1"}`, seg)
	o, err := result.New(output.Params{Arg: path, Registry: reg, Options: json.RawMessage(options),
		Script: "test.js", Version: "example", Logf: func(string, ...any) {}})
	if err != nil {
		panic(err)
	}
	if err := o.Start(); err != nil {
		panic(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var batch []metrics.Sample
	for v := 1; v <= n; v++ {
		batch = append(batch, metrics.Sample{Metric: b.HTTPReqDuration, Tags: metrics.EmptyTags, Time: at, Value: float64(v)})
	}
	o.AddSamples(batch)
	if err := o.Stop(); err != nil {
		panic(err)
	}
}
