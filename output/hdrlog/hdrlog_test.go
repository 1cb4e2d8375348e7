package hdrlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/internal/percentiles"
	"github.com/metronome-load/metronome/internal/testkit/logtest"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

type logs = logtest.Lines

// record runs an hdrlog output over the batches, one batch per 100 ms of
// (virtual) time, and returns the log.
func record(t *testing.T, path string, env map[string]string, batches [][]metrics.Sample) *logs {
	t.Helper()
	l := &logs{}
	out, err := New(output.Params{Arg: path, Env: env, Logf: l.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Start(); err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		out.AddSamples(b)
		time.Sleep(100 * time.Millisecond)
	}
	if err := out.Stop(); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRegistered(t *testing.T) {
	if _, ok := output.Lookup("hdrlog"); !ok {
		t.Error("hdrlog is not registered")
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(output.Params{}); err == nil || !strings.Contains(err.Error(), "-o hdrlog=") {
		t.Errorf("missing file: %v", err)
	}
	_, err := New(output.Params{Arg: "x.hlog", Env: map[string]string{"K6_HDRLOG_INTERVAL": "often"}})
	if err == nil || !strings.HasPrefix(err.Error(), "K6_HDRLOG_INTERVAL:") {
		t.Errorf("bad interval: %v", err)
	}
	o, err := New(output.Params{Arg: filepath.Join(t.TempDir(), "no", "such", "dir.hlog")})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err == nil || !strings.Contains(err.Error(), "cannot create") {
		t.Errorf("unwritable file: %v", err)
	}
}

func TestSeriesTag(t *testing.T) {
	for _, c := range []struct {
		s    Series
		want string
	}{
		{Series{Metric: "corrected_latency", Scenario: "api"}, "metric=corrected_latency;scenario=api"},
		{Series{Metric: "http_req_duration"}, "metric=http_req_duration"},
		{Series{Metric: "schedule_lag", Scenario: "my scenario,2;a=b"}, "metric=schedule_lag;scenario=my%20scenario%2C2%3Ba%3Db"},
		{Series{Metric: "http_req_duration", Scenario: "api", Name: "http://x.test/a?b=1&c=%41 \t\n<é>"},
			"metric=http_req_duration;scenario=api;name=http://x.test/a?b%3D1&c%3D%2541%20%09%0A<%C3%A9>"},
		{Series{Metric: "corrected_latency", Scenario: "api", Outcome: "dropped"}, "metric=corrected_latency;scenario=api;outcome=dropped"},
		{Series{Metric: "corrected_latency", Scenario: "api", Folded: true, Outcome: "interrupted"},
			"metric=corrected_latency;scenario=api;folded=true;outcome=interrupted"},
	} {
		got := c.s.Tag()
		if got != c.want {
			t.Errorf("%+v: tag %q, want %q", c.s, got, c.want)
		}
		// HdrHistogram's writer rejects a tag with a comma, space or line
		// break; ours never has one, whatever the name.
		if strings.ContainsAny(got, ", \t\r\n") {
			t.Errorf("tag %q holds a character the log format forbids", got)
		}
		if back := ParseTag(got); back != c.s {
			t.Errorf("ParseTag(%q) = %+v, want %+v", got, back, c.s)
		}
	}
	// Tags of older logs, and of other programs.
	for tag, want := range map[string]Series{
		"metric=schedule_lag;scenario=my_scenario_2_a_b": {Metric: "schedule_lag", Scenario: "my_scenario_2_a_b"},
		"metric=http_req_duration;scenario=50%off":       {Metric: "http_req_duration", Scenario: "50%off"},
		"latency": {Metric: "latency"},
		"":        {},
	} {
		if got := ParseTag(tag); got != want {
			t.Errorf("ParseTag(%q) = %+v, want %+v", tag, got, want)
		}
	}
}

// TestLogFormat reads the log back with hdrhistogram-go's reader: header
// lines, one interval per second per series (metric, scenario and, for
// corrected_latency, name), values in µs in the interval of their
// timestamp.
func TestLogFormat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		b := metrics.RegisterBuiltin(reg)
		api := metrics.NewTags(map[string]string{"scenario": "api", "name": "x"})
		start := time.Now()
		var batches [][]metrics.Sample
		for i := range 30 { // 3 s of batches, 100 ms apart
			at := start.Add(time.Duration(i) * 100 * time.Millisecond)
			batches = append(batches, []metrics.Sample{
				{Metric: b.CorrectedLatency, Tags: api, Time: at, Value: 12.3456},
				{Metric: b.HTTPReqs, Tags: api, Time: at, Value: 1},                      // not a trend
				{Metric: b.HTTPReqDuration, Tags: metrics.EmptyTags, Time: at, Value: 2}, // no scenario
				{Metric: b.ScheduleLag, Tags: api, Time: at, Value: -1},                  // skipped
			})
		}
		// A late sample of the first second arrives with the last batch.
		batches[29] = append(batches[29], metrics.Sample{Metric: b.CorrectedLatency, Tags: api, Time: start, Value: 1e9})
		path := filepath.Join(t.TempDir(), "run.hlog")
		l := record(t, path, nil, batches)
		if out := l.String(); !strings.Contains(out, "10 negative values") && !strings.Contains(out, "30 negative values") {
			t.Errorf("negative values not reported: %q", out)
		}
		if !strings.Contains(l.String(), "1 values above one day") {
			t.Errorf("clamped value not reported: %q", l)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, want := range []string{"#[Histogram log format version 1.3]", "#[StartTime: ", `"StartTimestamp","Interval_Length"`} {
			if !strings.Contains(text, want) {
				t.Errorf("log lacks %q:\n%s", want, text)
			}
		}
		r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(data))
		counts := map[string][]int64{}
		for {
			h, err := r.NextIntervalHistogram()
			if err != nil {
				t.Fatal(err)
			}
			if h == nil {
				break
			}
			sec := (h.StartTimeMs() - start.UnixMilli()) / 1000
			if h.EndTimeMs()-h.StartTimeMs() != 1000 {
				t.Errorf("interval of %d ms", h.EndTimeMs()-h.StartTimeMs())
			}
			if int64(len(counts[h.Tag()])) != sec {
				t.Errorf("%s: interval %d out of order", h.Tag(), sec)
			}
			counts[h.Tag()] = append(counts[h.Tag()], h.TotalCount())
			if h.Tag() == "metric=corrected_latency;scenario=api;name=x" && sec == 1 {
				if v := h.ValueAtPercentile(50); !h.ValuesAreEquivalent(v, 12346) {
					t.Errorf("12.3456 ms recorded as %d µs, want 12346", v)
				}
			}
		}
		want := map[string][]int64{
			"metric=corrected_latency;scenario=api;name=x": {11, 10, 10},
			"metric=http_req_duration":                     {10, 10, 10},
		}
		if fmt.Sprint(counts) != fmt.Sprint(want) {
			t.Errorf("interval counts %v, want %v", counts, want)
		}
	})
}

// run is a synthetic run: the samples of two instances of a test that
// split the arrivals between them (as execution segments do).
func splitRun(b *metrics.Builtin) (all, first, second [][]metrics.Sample, sinks map[string]*metrics.TrendSink) {
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Now()
	sinks = map[string]*metrics.TrendSink{}
	tagsOf := map[string]*metrics.TagSet{
		"api": metrics.NewTags(map[string]string{"scenario": "api"}),
		"web": metrics.NewTags(map[string]string{"scenario": "web"}),
	}
	for i := range 200 { // 20 s of batches, 100 ms apart
		var ba, b1, b2 []metrics.Sample
		for j := range 50 {
			sc := []string{"api", "web"}[j%2]
			at := start.Add(time.Duration(i)*100*time.Millisecond + time.Duration(j)*time.Millisecond)
			raw := 5 * math.Exp(rng.NormFloat64())
			lag := 0.0
			if rng.IntN(50) == 0 {
				lag = rng.Float64() * 3000
			}
			for _, s := range []metrics.Sample{
				{Metric: b.HTTPReqDuration, Tags: tagsOf[sc], Time: at, Value: raw},
				{Metric: b.ScheduleLag, Tags: tagsOf[sc], Time: at, Value: lag},
				{Metric: b.CorrectedLatency, Tags: tagsOf[sc], Time: at, Value: raw + lag},
			} {
				k := Series{Metric: s.Metric.Name, Scenario: sc}.Tag()
				if sinks[k] == nil {
					sinks[k] = metrics.NewTrendSink()
				}
				sinks[k].AddValue(s.Value)
				ba = append(ba, s)
				if j/2%2 == 0 { // both scenarios on both instances
					b1 = append(b1, s)
				} else {
					b2 = append(b2, s)
				}
			}
		}
		all, first, second = append(all, ba), append(first, b1), append(second, b2)
	}
	return all, first, second, sinks
}

func mergeFiles(t *testing.T, paths ...string) []percentiles.Summary {
	t.Helper()
	m := NewMerger()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		err = m.Add(f, p)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	var out []percentiles.Summary
	for _, d := range m.Distributions() {
		if d.Dropped != 0 {
			t.Errorf("%s: %d values dropped in the merge", d.Tag, d.Dropped)
		}
		out = append(out, d.Summarize(percentiles.Table))
	}
	return out
}

// TestMergeHalvesEqualsWhole merges the logs of two instances that each ran
// half of the arrivals and checks that every number equals the log of one
// instance that ran them all: HdrHistogram merges are exact.
func TestMergeHalvesEqualsWhole(t *testing.T) {
	dir := t.TempDir()
	var all, first, second [][]metrics.Sample
	var sinks map[string]*metrics.TrendSink
	b := metrics.RegisterBuiltin(metrics.NewRegistry())
	// Each instance runs in its own bubble, so each starts at the same
	// virtual instant as the samples.
	synctest.Test(t, func(t *testing.T) {
		all, first, second, sinks = splitRun(b)
		record(t, filepath.Join(dir, "all.hlog"), nil, all)
	})
	synctest.Test(t, func(t *testing.T) { record(t, filepath.Join(dir, "a.hlog"), nil, first) })
	synctest.Test(t, func(t *testing.T) { record(t, filepath.Join(dir, "b.hlog"), nil, second) })
	whole := mergeFiles(t, filepath.Join(dir, "all.hlog"))
	halves := mergeFiles(t, filepath.Join(dir, "a.hlog"), filepath.Join(dir, "b.hlog"))
	if len(whole) != 6 || len(halves) != 6 {
		t.Fatalf("%d and %d distributions, want 3 metrics × 2 scenarios", len(whole), len(halves))
	}
	for i := range whole {
		w, h := whole[i], halves[i]
		if w.Metric != h.Metric || w.Labels != h.Labels || w.Count != h.Count || w.Min != h.Min ||
			w.Max != h.Max || w.Mean != h.Mean || fmt.Sprint(w.Percentiles) != fmt.Sprint(h.Percentiles) {
			t.Errorf("%s %s: halves %+v\nwhole %+v", w.Metric, w.Labels, h, w)
		}
		if h.Intervals != 2*w.Intervals || w.Intervals != 20 {
			t.Errorf("%s %s: %d intervals in the halves, %d in the whole", w.Metric, w.Labels, h.Intervals, w.Intervals)
		}
		// Against the end-of-test summary of the whole run: the same
		// buckets and estimator, so equal but where the summary clamps to
		// its exact max (within half a bucket: 0.05%).
		sink := sinks[Series{Metric: w.Metric, Scenario: strings.TrimPrefix(w.Labels, "scenario=")}.Tag()]
		if w.Count != sink.Count() {
			t.Errorf("%s %s: count %d, want %d", w.Metric, w.Labels, w.Count, sink.Count())
		}
		for _, p := range percentiles.Table {
			got, want := w.Percentiles[percentiles.Name(p)], sink.Percentile(p)
			if math.Abs(got-want) > want/2000 {
				t.Errorf("%s %s p%g: %g ms, summary %g ms", w.Metric, w.Labels, p, got, want)
			}
		}
	}
}

func TestMergeRejectsOtherFiles(t *testing.T) {
	m := NewMerger()
	err := m.Add(strings.NewReader("hello\nworld\n"), "notes.txt")
	if err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("error %v", err)
	}
	err = m.Add(strings.NewReader("Tag=a,0.0,1.0,0.1,HISTFAAAnotbase64!!\n"), "bad.hlog")
	if err == nil || !strings.Contains(err.Error(), "bad.hlog") {
		t.Errorf("error %v", err)
	}
}

func TestWriteTableAndJSON(t *testing.T) {
	m := NewMerger()
	h := hdrhistogram.NewPacked(Lowest, Highest, SignificantDigits)
	for v := int64(1000); v <= 100_000; v += 1000 {
		_ = h.RecordValue(v)
	}
	m.merge(&Interval{Tag: Series{Metric: "corrected_latency", Scenario: "api"}.Tag(),
		Start: time.UnixMilli(1_700_000_000_000), End: time.UnixMilli(1_700_000_001_000), Hist: h})
	sums := []percentiles.Summary{m.Distributions()[0].Summarize(percentiles.Table)}
	if got := m.Distributions("http_req_duration"); len(got) != 0 {
		t.Errorf("metric filter kept %d", len(got))
	}
	var tb bytes.Buffer
	if err := percentiles.WriteTable(&tb, sums, percentiles.Table); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(tb.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("table:\n%s", tb.String())
	}
	for _, want := range []string{"metric", "p99.9", "max"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("header %q lacks %s", lines[0], want)
		}
	}
	// Values 1, 2, ... 100 ms: p50 interpolates between 50 and 51 ms.
	for _, want := range []string{"corrected_latency", "scenario=api", " 100 ", " 1ms ", " 50.5ms ", " 100ms"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row %q lacks %s", lines[1], want)
		}
	}
	var jb bytes.Buffer
	if err := percentiles.WriteJSON(&jb, sums); err != nil {
		t.Fatal(err)
	}
	var back []percentiles.Summary
	if err := json.Unmarshal(jb.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || back[0].Count != 100 || math.Abs(back[0].Percentiles["p50"]-50.5) > 0.05 ||
		math.Abs(back[0].Max-100) > 0.05 || back[0].Labels != "scenario=api" {
		t.Errorf("json %s", jb.String())
	}
}

// Every interval the output has written is in the file while the run is
// still going: nothing waits in a buffer for the end, so a kill -9 or an
// OOM kill loses at most the intervals not yet closed.
func TestIntervalsReachTheFileAsTheyClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		b := metrics.RegisterBuiltin(reg)
		tags := metrics.NewTags(map[string]string{"scenario": "s"})
		path := filepath.Join(t.TempDir(), "live.hlog")
		out, err := New(output.Params{Arg: path, Env: map[string]string{EnvInterval: "100ms"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Start(); err != nil {
			t.Fatal(err)
		}
		defer out.Stop()
		if data, _ := os.ReadFile(path); !strings.Contains(string(data), "#[StartTime: ") {
			t.Errorf("the header is not on disk after Start:\n%s", data)
		}
		// 50 intervals of 100 ms, one sample in each.
		const n = 50
		start := time.Now()
		for i := range n {
			at := start.Add(time.Duration(i)*100*time.Millisecond + 50*time.Millisecond)
			time.Sleep(time.Until(at))
			out.AddSamples([]metrics.Sample{{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: 5}})
		}
		// An interval is written grace (2 s) after its end, checked every
		// 100 ms: by start + 5 s + 2 s + 200 ms all 50 are due.
		time.Sleep(time.Until(start.Add(n*100*time.Millisecond + 2200*time.Millisecond)))
		synctest.Wait()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "Tag=metric=http_req_duration;scenario=s,") {
				lines++
			}
		}
		if lines != n {
			t.Errorf("before Stop the file holds %d interval lines, want %d:\n%s", lines, n, data)
		}
	})
}

// A full disk is an error from Stop that says how much of the log is
// missing, not a warning the run's exit code ignores.
func TestDiskFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	out, err := New(output.Params{Arg: "/dev/full"})
	if err != nil {
		t.Fatal(err)
	}
	// The header is flushed at Start, so the error comes from Start.
	if err = out.Start(); err == nil {
		now := time.Now()
		out.AddSamples([]metrics.Sample{
			{Metric: b.HTTPReqDuration, Tags: metrics.EmptyTags, Time: now, Value: 1},
			{Metric: b.CorrectedLatency, Tags: metrics.EmptyTags, Time: now, Value: 1},
		})
		err = out.Stop()
	}
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("got %v, want the ENOSPC error", err)
	}
}

// Samples the output had no room for make Stop fail, with their count.
func TestDroppedIsAnError(t *testing.T) {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	o, err := New(output.Params{Arg: filepath.Join(t.TempDir(), "x.hlog")})
	if err != nil {
		t.Fatal(err)
	}
	out := o.(*Output)
	// Fill the inbox before the goroutine runs, so the next batch has no room.
	for range inputBuffer {
		out.AddSamples([]metrics.Sample{{Metric: b.HTTPReqDuration, Value: 1}})
	}
	out.AddSamples([]metrics.Sample{{Metric: b.HTTPReqDuration, Value: 1}, {Metric: b.HTTPReqDuration, Value: 2}})
	if err := out.Start(); err != nil {
		t.Fatal(err)
	}
	err = out.Stop()
	if err == nil || !strings.Contains(err.Error(), "2 samples were dropped") {
		t.Errorf("Stop = %v, want an error counting 2 dropped samples", err)
	}
}
