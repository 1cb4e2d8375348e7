package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/output/hdrlog"
	"github.com/metronome-load/metronome/output/result"
)

// recorded is one run's samples written through the hdrlog and the result
// output, and the sinks of the same samples per row.
type recorded struct {
	hlog, result string
	sinks        map[string]*metrics.TrendSink // "metric labels" → sink
}

// record makes five seconds of requests in virtual time, two names in two
// scenarios, and writes them through both outputs.
func record(t *testing.T) *recorded {
	t.Helper()
	rec := &recorded{result: filepath.Join(t.TempDir(), "run.result"), sinks: map[string]*metrics.TrendSink{}}
	sink := func(key string) *metrics.TrendSink {
		if rec.sinks[key] == nil {
			rec.sinks[key] = metrics.NewTrendSink()
		}
		return rec.sinks[key]
	}
	var hlog bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		b := metrics.RegisterBuiltin(reg)
		h, err := hdrlog.New(output.Params{Arg: "-", Stdout: &hlog, Registry: reg, Now: time.Now, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		r, err := result.New(output.Params{Arg: rec.result, Registry: reg, Now: time.Now, Logf: t.Logf,
			Options: json.RawMessage(`{}`), Script: "no-such-script.js", Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []output.Output{h, r} {
			if err := o.Start(); err != nil {
				t.Fatal(err)
			}
		}
		rng := rand.New(rand.NewPCG(5, 5))
		for range 50 {
			var batch []metrics.Sample
			for k := range 40 {
				sc, name := []string{"api", "web"}[k%2], []string{"login", "home"}[k/2%2]
				tags := metrics.EmptyTags.With("scenario", sc).With("name", name).With("status", "200")
				raw := rng.ExpFloat64() * 20
				corrected := raw + rng.ExpFloat64()*5
				at := time.Now().Add(time.Duration(k) * time.Millisecond)
				batch = append(batch,
					metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: raw},
					metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: corrected})
				for _, key := range []string{"", "scenario=" + sc, "name=" + name} {
					sink("http_req_duration " + key).AddValue(raw)
					sink("corrected_latency " + key).AddValue(corrected)
				}
			}
			h.AddSamples(batch)
			r.AddSamples(batch)
			time.Sleep(100 * time.Millisecond)
		}
		for _, o := range []output.Output{h, r} {
			if err := o.Stop(); err != nil {
				t.Fatal(err)
			}
		}
	})
	rec.hlog = filepath.Join(t.TempDir(), "run.hlog")
	if err := os.WriteFile(rec.hlog, hlog.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return rec
}

// Both kinds of file read back to the same run: the hdrlog and the result
// file of one run compare equal row by row, and every row's percentiles
// are the end-of-test summary's of its samples, but for the smallest and
// largest value, which the summary keeps exactly and the files as the
// middle of their bucket (within 0.05%, TrendSink's precision).
func TestReadHdrlogAndResultFile(t *testing.T) {
	rec := record(t)
	hl, err := ReadFile(rec.hlog, nil)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := ReadFile(rec.result, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hl.Kind != "hdrlog" || rf.Kind != "result" || len(hl.Starts) != 5 || len(rf.Starts) != 5 {
		t.Fatalf("kinds %s and %s, %d and %d intervals; want hdrlog and result, 5 each", hl.Kind, rf.Kind, len(hl.Starts), len(rf.Starts))
	}
	rep, err := Compare(hl, rf, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	// Each metric: all samples, two scenarios, two names.
	if len(rep.Rows) != 10 {
		t.Errorf("%d rows, want 10", len(rep.Rows))
	}
	for _, row := range rep.Rows {
		want := rec.sinks[row.Metric+" "+row.Labels]
		if want == nil || row.Count != [2]int64{want.Count(), want.Count()} {
			t.Errorf("%s %s: counts %v, want the %v samples in each", row.Metric, row.Labels, row.Count, want.Count())
			continue
		}
		for _, d := range row.Diffs {
			if p := want.Percentile(d.Percentile); math.Abs(d.Base-p) > 5e-4*p || d.New != d.Base {
				t.Errorf("%s %s p%v: hdrlog %v, result file %v, summary %v", row.Metric, row.Labels, d.Percentile, d.Base, d.New, p)
			}
		}
	}
}

func TestReadErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "is neither an HdrHistogram log (-o hdrlog=FILE) nor a result file (-o result=FILE)"},
		{"export default function () {}\n", "is neither an HdrHistogram log"},
		{`{"not": "a result"}` + "\n", "is not a result file"},
	} {
		_, err := Read(strings.NewReader(c.text), "x")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none"), nil); err == nil || !strings.HasSuffix(err.Error(), "none: no such file or directory") {
		t.Errorf("missing file: %v", err)
	}
}

// The judged row must exist, and the flags must make sense.
func TestCompareErrors(t *testing.T) {
	run := steady.run(1, "a.hlog")
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Tags = "name=nope" }, "--tags name=nope: no such tag set of corrected_latency; there are scenario=default, name=GET /"},
		{func(o *Options) { o.Metric = "raw" }, "--metric raw: the runs do not both hold http_req_duration, grpc_req_duration, ws_connecting"},
		{func(o *Options) { o.Metric = "foo" }, "--metric foo: a.hlog holds no foo; it holds corrected_latency"},
		{func(o *Options) { o.Percentile = 100 }, "--percentile must be between 0 and 100"},
		{func(o *Options) { o.Confidence = 0 }, "--confidence must be between 0 and 100"},
		{func(o *Options) { o.Tolerance = math.NaN() }, "--tolerance must be"},
		{func(o *Options) { o.Resamples = 0 }, "--resamples must be at least 1"},
	} {
		o := DefaultOptions
		c.edit(&o)
		if _, err := Compare(run, run, o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	o := DefaultOptions
	o.Tags = "name=GET /"
	if rep, err := Compare(run, run, o); err != nil || !rep.Rows[1].Judged || rep.Rows[1].Labels != "name=GET /" {
		t.Errorf("--tags naming the only name: %v", err)
	}
}
