package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/internal/testkit/logtest"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

const testOptions = `{"executionSegment":"1/4:2/4","executionSegmentSequence":"0,1/4,2/4,3/4,1",` +
	`"tags":{"instance_id":"2","testrun_name":"t"},"thresholds":{"http_req_duration":["p(99)<100"]}}`

// run is one recorded run: its registry, its samples and the file.
type run struct {
	reg     *metrics.Registry
	samples []metrics.Sample
	path    string
	logs    *logtest.Lines
}

// record runs the output over batches of samples made by gen, one batch
// per 100 ms of virtual time, ending with end, and returns the run.
func record(t *testing.T, env map[string]string, batches int, gen func(reg *metrics.Registry, b *metrics.Builtin, at time.Time, i int) []metrics.Sample, end *output.RunEnd) *run {
	t.Helper()
	r := &run{reg: metrics.NewRegistry(), path: filepath.Join(t.TempDir(), "{instance_id}.result"), logs: &logtest.Lines{}}
	b := metrics.RegisterBuiltin(r.reg)
	synctest.Test(t, func(t *testing.T) {
		o, err := New(output.Params{Arg: r.path, Env: env, Registry: r.reg, Logf: r.logs.Logf,
			Options: json.RawMessage(testOptions), Script: "no-such-script.js", Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		r.path = o.(*Output).Path()
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		for i := range batches {
			batch := gen(r.reg, b, time.Now(), i)
			r.samples = append(r.samples, batch...)
			o.AddSamples(batch)
			time.Sleep(100 * time.Millisecond)
		}
		if end != nil {
			o.(output.EndReceiver).ReceiveEnd(*end)
		}
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
	})
	return r
}

// httpSamples is a batch of requests over a few names and statuses, with
// checks, a gauge, and a custom trend that goes negative.
func httpSamples(reg *metrics.Registry, b *metrics.Builtin, at time.Time, i int) []metrics.Sample {
	rng := rand.New(rand.NewPCG(uint64(i), 9))
	custom := reg.MustNew("signed", metrics.Trend, metrics.Default)
	base := metrics.EmptyTags.With("scenario", "s").With("instance_id", "2")
	var out []metrics.Sample
	for k := range 50 {
		tags := base.With("name", fmt.Sprintf("n%d", k%3)).With("status", []string{"200", "500"}[rng.IntN(2)])
		d := rng.ExpFloat64() * 50
		t := at.Add(time.Duration(k) * time.Millisecond)
		out = append(out,
			metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: t, Value: d},
			metrics.Sample{Metric: b.HTTPReqs, Tags: tags, Time: t, Value: 1},
			metrics.Sample{Metric: b.HTTPReqFailed, Tags: tags, Time: t, Value: float64(rng.IntN(2))},
			metrics.Sample{Metric: b.Checks, Tags: base.With("check", "ok").With("group", "::g"), Time: t, Value: float64(rng.IntN(2))},
			metrics.Sample{Metric: custom, Tags: base, Time: t, Value: rng.NormFloat64() * 10},
		)
	}
	out = append(out, metrics.Sample{Metric: b.VUs, Tags: base, Time: at, Value: float64(i % 7)})
	return out
}

// engineOf aggregates, with the same engine options, either the samples
// or a file's series.
func engineOf(t *testing.T, reg *metrics.Registry, samples []metrics.Sample, f *File) *metrics.Engine {
	t.Helper()
	e, err := metrics.NewEngine(reg, metrics.EngineOptions{
		Submetrics: []string{"http_req_duration{name:n1}", "http_req_failed{status:500}"},
		Breakdowns: []metrics.Breakdown{{Metric: metrics.HTTPReqDurationName, Tag: "name"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if f == nil {
		e.Ingest(samples)
		return e
	}
	for _, s := range f.Series {
		m := reg.Get(s.Metric.Name)
		if m == nil || !e.IngestSink(m, s.Tags, s.Sink) {
			t.Fatalf("series of %s cannot be ingested", s.Metric.Name)
		}
	}
	return e
}

func readFile(t *testing.T, path string) *File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := Read(fh, path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// describe is everything the summary and thresholds read of an engine.
func describe(e *metrics.Engine) string {
	var b strings.Builder
	for _, o := range e.Observed() {
		fmt.Fprintf(&b, "%s:", o.Name)
		switch s := o.Sink.(type) {
		case *metrics.CounterSink:
			fmt.Fprintf(&b, " %g %d\n", s.Sum, s.Count)
		case *metrics.GaugeSink:
			fmt.Fprintf(&b, " %g %g %g\n", s.Value, s.Min, s.Max)
		case *metrics.RateSink:
			fmt.Fprintf(&b, " %d/%d\n", s.Trues, s.Total)
		case *metrics.TrendSink:
			fmt.Fprintf(&b, " n=%d sum=%.9g min=%g max=%g p50=%g p90=%g p99=%g\n", s.Count(), s.Sum(), s.Min(), s.Max(),
				s.Percentile(50), s.Percentile(90), s.Percentile(99))
		}
	}
	fmt.Fprintf(&b, "checks %v groups %v\n", e.Checks(), e.Groups())
	_, parts, folded, _ := e.Breakdown(metrics.HTTPReqDurationName)
	for _, p := range parts {
		s := p.Sink.(*metrics.TrendSink)
		fmt.Fprintf(&b, "name %s: n=%d p99=%g\n", p.Value, s.Count(), s.Percentile(99))
	}
	fmt.Fprintf(&b, "folded %d\n", folded)
	return b.String()
}

// A file's series, summed over its intervals and merged into an engine,
// give exactly what the engine gets from the samples themselves (sums of
// floats to nine digits); the header and end line carry the run.
func TestFileMergesLikeTheSamples(t *testing.T) {
	end := &output.RunEnd{Elapsed: 2500 * time.Millisecond, SetupData: json.RawMessage(`{"token":"x"}`),
		Scenarios: []output.ScenarioEnd{
			{Name: "s", Open: &executor.Account{Intended: 10, OnTime: 8, Late: 2, Completed: 9, Interrupted: 1}},
			{Name: "c", BackFill: &executor.BackFillAccount{Interval: executor.ExpectedInterval{Mode: executor.IntervalAuto},
				Requests: 5, Backfilled: 3, Estimates: []time.Duration{time.Millisecond, 3 * time.Millisecond}}},
		},
		Health: &health.Tally{Intervals: 4, Limited: 2, ByReason: map[health.Reason]int{health.ReasonCPU: 2, health.ReasonWakeup: 1},
			Procs: 2, MaxCPU: 0.97, MaxSched: 3 * time.Millisecond, Arrivals: 10, LateWakeup: 1}}
	r := record(t, nil, 35, httpSamples, end)
	if filepath.Base(r.path) != "2.result" {
		t.Errorf("the file is %s, want {instance_id} replaced by the instance_id tag", r.path)
	}
	f := readFile(t, r.path)
	if f.Truncated != "" || f.End == nil {
		t.Fatalf("a complete file reads as truncated: %q", f.Truncated)
	}
	h := f.Header
	if h.Format != Format || h.Version != Version || h.Segment != "1/4:2/4" || h.Sequence != "0,1/4,2/4,3/4,1" ||
		h.Tags["instance_id"] != "2" || h.Interval != "1s" || h.Test == "" || h.Metronome != "test" {
		t.Errorf("header %+v", h)
	}
	if f.Intervals < 4 || f.Intervals > 5 {
		t.Errorf("%d intervals for 3.5 s of samples in 1 s intervals", f.Intervals)
	}
	if got, want := describe(engineOf(t, r.reg, nil, f)), describe(engineOf(t, r.reg, r.samples, nil)); got != want {
		t.Errorf("merged from the file:\n%s\nfrom the samples:\n%s", got, want)
	}
	if f.End.Elapsed != "2.5s" || string(f.End.SetupData) != `{"token":"x"}` || len(f.End.Scenarios) != 2 ||
		f.End.Scenarios[0].Open.Completed != 9 || f.End.Scenarios[1].BackFill.Interval != "auto" ||
		len(f.End.Scenarios[1].BackFill.Estimates) != 2 {
		t.Errorf("end %+v", f.End)
	}
	if got := f.End.Health.Tally(); !reflect.DeepEqual(got, *end.Health) {
		t.Errorf("health read back as %+v, want %+v", got, *end.Health)
	}
	// A trend's interval carries the histogram of each sign it had values
	// of, and only those.
	fh, err := os.Open(r.path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var pos, neg, signedNeg int
	if _, err := Scan(fh, r.path, func(d *Delta) {
		switch d.Series.Metric.Name {
		case metrics.HTTPReqDurationName:
			pos += int(min(countOf(d.Pos), 1))
			neg += int(min(countOf(d.Neg), 1))
		case "signed":
			signedNeg += int(min(countOf(d.Neg), 1))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if pos == 0 || neg != 0 || signedNeg == 0 {
		t.Errorf("intervals with values: http_req_duration %d with a histogram of values ≥ 0, %d of negative ones (want none); signed %d of negative ones",
			pos, neg, signedNeg)
	}
	// Metrics come in the registry's order, the custom one after the
	// built-ins.
	if n := len(f.Metrics); n < 2 || f.Metrics[0].Name != metrics.VUsName || f.Metrics[n-1].Name != "signed" {
		t.Errorf("metrics %v", f.Metrics)
	}
}

// Identity ignores what the instances of one test differ in, and nothing
// else.
func TestIdentity(t *testing.T) {
	a := Identity(json.RawMessage(`{"executionSegment":"0:1/2","tags":{"instance_id":"1"},"vus":2}`), "abc")
	b := Identity(json.RawMessage(`{"vus":2,"tags":{"instance_id":"2"},"executionSegment":"1/2:1"}`), "abc")
	if a != b {
		t.Error("two instances of one test have different identities")
	}
	if a == Identity(json.RawMessage(`{"vus":3}`), "abc") || a == Identity(json.RawMessage(`{"vus":2}`), "abd") {
		t.Error("other options or another script have the same identity")
	}
}

// A file cut anywhere (a runner killed mid-write) reads up to its last
// whole line and says so; its series hold no more than the whole file's.
func TestTruncatedFile(t *testing.T) {
	r := record(t, nil, 25, httpSamples, nil)
	whole, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatal(err)
	}
	full := readFile(t, r.path)
	count := func(f *File) int64 {
		var n int64
		for _, s := range f.Series {
			if c, ok := s.Sink.(*metrics.CounterSink); ok && s.Metric.Name == metrics.HTTPReqsName {
				n += c.Count
			}
		}
		return n
	}
	if full.End == nil || count(full) != 25*50 {
		t.Fatalf("whole file: end %v, %d requests", full.End, count(full))
	}
	firstLine := bytes.IndexByte(whole, '\n') + 1
	endLine := bytes.LastIndexByte(whole[:len(whole)-1], '\n') + 1
	rng := rand.New(rand.NewPCG(1, 1))
	prev := int64(-1)
	for _, cut := range append([]int{firstLine, firstLine + 3, endLine + 5}, rng.Perm(len(whole) - firstLine)[:40]...) {
		if cut < firstLine {
			cut += firstLine
		}
		if cut >= len(whole) {
			continue
		}
		f, err := Read(bytes.NewReader(whole[:cut]), "cut.result")
		if err != nil {
			t.Fatalf("cut at %d of %d: %v", cut, len(whole), err)
		}
		if f.End != nil || !strings.HasPrefix(f.Truncated, "cut.result ") || !strings.Contains(f.Truncated, "end line") {
			t.Errorf("cut at %d: end %v, truncated %q", cut, f.End, f.Truncated)
		}
		if n := count(f); n > count(full) {
			t.Errorf("cut at %d: %d requests, more than the whole file's %d", cut, n, count(full))
		}
		if cut == endLine+5 {
			prev = count(f)
		}
	}
	// Only the newline missing: the end line is whole.
	if f, err := Read(bytes.NewReader(whole[:len(whole)-1]), "x"); err != nil {
		t.Error(err)
	} else if f.End == nil || f.Truncated != "" {
		t.Errorf("the end line without its newline reads as truncated: %q", f.Truncated)
	}
	if prev != count(full) {
		t.Errorf("a file whose end line alone is cut holds %d requests, want all %d", prev, count(full))
	}
}

// minimalHeader is the header line of a file with no options and no
// script: the least a reader takes.
var minimalHeader = `{"header":{"format":"metronome-result","version":1,"test":"` + Identity(nil, "") + `"}}` + "\n"

// Files that are not result files, and broken ones, are refused in one
// sentence that names them.
func TestReadRefuses(t *testing.T) {
	for _, c := range []struct{ name, content, want string }{
		{"empty", "", "empty.result is empty, not a result file"},
		{"hdrlog", "#[StartTime: 1]\n", "hdrlog.result is not a result file (written with -o result=FILE)"},
		{"json", `{"metrics":{}}` + "\n", "json.result is not a result file"},
		{"newer", `{"header":{"format":"metronome-result","version":9,"metronome":"v9"}}` + "\n", "written in result format 9 by a newer metronome (v9)"},
		{"series", minimalHeader + `{"series":{"id":0,"metric":"x"}}` + "\n", `series.result: line 2: series 0 is of metric "x", which is not defined before it`},
		{"entry", minimalHeader + `{"metric":{"name":"xx","type":"counter"}}` + "\n" + `{"series":{"id":0,"metric":"xx"}}` + "\n" + `{"interval":{"start":1,"end":2,"data":[{"s":4,"n":1}]}}` + "\n", "entry.result: line 4: series 4 is not defined before it"},
		{"garbage", minimalHeader + "not json\n{}\n", "garbage.result: line 2 is not a result line"},
	} {
		_, err := Read(strings.NewReader(c.content), c.name+".result")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// Past K6_RESULT_MAX_SERIES, new tag sets are recorded per metric and
// scenario only: the metric's totals stay exact and the fold is counted.
func TestSeriesCap(t *testing.T) {
	gen := func(reg *metrics.Registry, b *metrics.Builtin, at time.Time, i int) []metrics.Sample {
		var out []metrics.Sample
		for k := range 10 {
			tags := metrics.EmptyTags.With("scenario", "s").With("url", fmt.Sprintf("/item/%d", i*10+k))
			out = append(out, metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: float64(k + 1)})
		}
		return out
	}
	r := record(t, map[string]string{EnvMaxSeries: "5"}, 3, gen, &output.RunEnd{})
	f := readFile(t, r.path)
	var named, folded int64
	for _, s := range f.Series {
		n := s.Sink.(*metrics.TrendSink).Count()
		if v, _ := s.Tags.Get(FoldedTag); v == "true" {
			if sc, _ := s.Tags.Get("scenario"); sc != "s" || s.Tags.Len() != 2 {
				t.Errorf("folded series tags %v", s.Tags)
			}
			folded += n
		} else {
			named += n
		}
	}
	if len(f.Series) != 6 || named != 5 || folded != 25 || f.End.Folded != 25 {
		t.Errorf("%d series, %d named samples, %d folded (end says %d); want 6, 5, 25", len(f.Series), named, folded, f.End.Folded)
	}
	if !strings.Contains(r.logs.String(), "25 samples past the first 5 series") {
		t.Errorf("logs: %v", r.logs)
	}
}

// Infinite values and NaN survive the file as a metrics sink keeps them.
func TestNonFiniteValues(t *testing.T) {
	gen := func(reg *metrics.Registry, b *metrics.Builtin, at time.Time, i int) []metrics.Sample {
		g := reg.MustNew("gg", metrics.Gauge, metrics.Default)
		tr := reg.MustNew("tt", metrics.Trend, metrics.Default)
		return []metrics.Sample{
			{Metric: g, Time: at, Value: math.Inf(-1)}, {Metric: g, Time: at.Add(time.Millisecond), Value: math.Inf(1)},
			{Metric: tr, Time: at, Value: math.NaN()}, {Metric: tr, Time: at, Value: math.Inf(1)}, {Metric: tr, Time: at, Value: 2},
		}
	}
	r := record(t, nil, 1, gen, nil)
	got := describe(engineOf(t, r.reg, nil, readFile(t, r.path)))
	want := describe(engineOf(t, r.reg, r.samples, nil))
	if got != want || !strings.Contains(got, "gg: +Inf -Inf +Inf") {
		t.Errorf("from the file:\n%s\nfrom the samples:\n%s", got, want)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(output.Params{}); err == nil || !strings.Contains(err.Error(), "-o result=") {
		t.Errorf("no file: %v", err)
	}
	if _, err := New(output.Params{Arg: "x", Env: map[string]string{EnvInterval: "1ms"}}); err == nil || !strings.HasPrefix(err.Error(), EnvInterval) {
		t.Errorf("short interval: %v", err)
	}
	if _, err := New(output.Params{Arg: "x", Env: map[string]string{EnvMaxSeries: "0"}}); err == nil || !strings.HasPrefix(err.Error(), EnvMaxSeries) {
		t.Errorf("no series: %v", err)
	}
	o, err := New(output.Params{Arg: filepath.Join(t.TempDir(), "no", "dir", "x.result")})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err == nil || !strings.Contains(err.Error(), "cannot create") {
		t.Errorf("unwritable: %v", err)
	}
}

// endless is a file that never ends a line.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// A damaged file without line breaks is refused once a line passes the
// bound, instead of being read into memory whole.
func TestLongLineIsRefused(t *testing.T) {
	if _, err := readLine(bufio.NewReaderSize(endless{}, 4096), 1<<20); !errors.Is(err, errLongLine) {
		t.Fatalf("an endless line: %v, want errLongLine", err)
	}
	head := minimalHeader
	s := newScanner("long.result", func(*Delta) {})
	s.limit = 1 << 20
	_, err := scan(io.MultiReader(strings.NewReader(head), endless{}), s)
	if err == nil || !strings.Contains(err.Error(), "long.result: line 2 is longer than 1 MiB") {
		t.Errorf("an endless second line: %v", err)
	}
}

// A run that ended early records why in its end line, with the exit code
// it gave, so that the merge of its file does not pass for a whole run;
// one that ran to its end, or that a threshold stopped, records nothing.
func TestEndRecordsAnEarlyStop(t *testing.T) {
	for _, c := range []struct {
		err  error
		want *Stopped
	}{
		{nil, nil},
		{exitcode.Errorf(exitcode.ThresholdsFailed, "thresholds on metrics 'x' were crossed"), nil},
		{exitcode.Errorf(exitcode.ExternalAbort, "test run aborted by signal"), &Stopped{Code: exitcode.ExternalAbort, Error: "test run aborted by signal"}},
		{exitcode.Errorf(exitcode.ScriptAborted, "test aborted: see http://u:pw@h/"), &Stopped{Code: exitcode.ScriptAborted, Error: "test aborted: see http://u:" + output.Mask + "@h/"}},
	} {
		r := record(t, nil, 2, httpSamples, &output.RunEnd{Elapsed: time.Second, Err: c.err})
		if got := readFile(t, r.path).End.Stopped; (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%v: end line stopped %+v, want %+v", c.err, got, c.want)
		}
	}
}
