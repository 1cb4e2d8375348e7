package counter_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/examples/extension/counter"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

func newCounts(t *testing.T, p output.Params) output.Output {
	t.Helper()
	c, ok := output.Lookup(counter.CountsName)
	if !ok {
		t.Fatalf("output %q is not registered", counter.CountsName)
	}
	o, err := c(p)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestCountsWritesOneLinePerMetric(t *testing.T) {
	reg := metrics.NewRegistry()
	reqs := reg.MustNew("http_reqs", metrics.Counter, metrics.Default)
	dur := reg.MustNew("http_req_duration", metrics.Trend, metrics.Time)
	reg.MustNew("vus", metrics.Gauge, metrics.Default) // never gets a sample
	path := filepath.Join(t.TempDir(), "counts.txt")
	o := newCounts(t, output.Params{Arg: path, Registry: reg})
	if d := o.Description(); d != "counts ("+path+")" {
		t.Errorf("description %q", d)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1700000000, 0)
	sample := func(m *metrics.Metric) metrics.Sample {
		return metrics.Sample{Metric: m, Tags: metrics.EmptyTags, Time: at, Value: 1}
	}
	o.AddSamples([]metrics.Sample{sample(reqs), sample(dur), sample(reqs)})
	o.AddSamples(nil)
	o.AddSamples([]metrics.Sample{sample(dur), sample(reqs)})
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "http_req_duration 2\nhttp_reqs 3\nvus 0\n"; string(got) != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
}

func TestCountsToStdout(t *testing.T) {
	reg := metrics.NewRegistry()
	m := reg.MustNew("iterations", metrics.Counter, metrics.Default)
	var out bytes.Buffer
	o := newCounts(t, output.Params{Arg: "-", Registry: reg, Stdout: &out})
	if o.Description() != "counts (stdout)" {
		t.Errorf("description %q", o.Description())
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	batch := make([]metrics.Sample, 1000)
	for i := range batch {
		batch[i] = metrics.Sample{Metric: m, Tags: metrics.EmptyTags, Value: 1}
	}
	o.AddSamples(batch)
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "iterations 1000\n" {
		t.Errorf("stdout %q", out.String())
	}
}

func TestCountsMistakes(t *testing.T) {
	c, _ := output.Lookup(counter.CountsName)
	if _, err := c(output.Params{Arg: " "}); err == nil || !strings.Contains(err.Error(), "-o counts=counts.txt") {
		t.Errorf("no file: error %v, want one showing how to name the file", err)
	}
	o := newCounts(t, output.Params{Arg: filepath.Join(t.TempDir(), "missing", "counts.txt"), Registry: metrics.NewRegistry()})
	if err := o.Start(); err == nil || !strings.HasPrefix(err.Error(), "counts output: ") {
		t.Errorf("unwritable path: Start error %v", err)
	}
}

func BenchmarkCountsAddSamples(b *testing.B) {
	reg := metrics.NewRegistry()
	ms := []*metrics.Metric{
		reg.MustNew("a", metrics.Counter, metrics.Default),
		reg.MustNew("b", metrics.Trend, metrics.Time),
		reg.MustNew("c", metrics.Rate, metrics.Default),
	}
	batch := make([]metrics.Sample, 256)
	for i := range batch {
		batch[i] = metrics.Sample{Metric: ms[i%len(ms)], Tags: metrics.EmptyTags, Value: 1}
	}
	c, _ := output.Lookup(counter.CountsName)
	o, err := c(output.Params{Arg: "-", Registry: reg, Stdout: &bytes.Buffer{}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		o.AddSamples(batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/sample")
}
