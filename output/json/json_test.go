package json

import (
	"bufio"
	"bytes"
	"compress/gzip"
	stdjson "encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/secrets"
)

type point struct {
	Metric string `json:"metric"`
	Type   string `json:"type"`
	Data   struct {
		Time     string            `json:"time"`
		Value    *float64          `json:"value"`
		Tags     map[string]string `json:"tags"`
		Metadata map[string]string `json:"metadata"`
	} `json:"data"`
}

type metricLine struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Name       string   `json:"name"`
		Type       string   `json:"type"`
		Contains   string   `json:"contains"`
		Thresholds []string `json:"thresholds"`
		Submetrics []struct {
			Name   string            `json:"name"`
			Suffix string            `json:"suffix"`
			Tags   map[string]string `json:"tags"`
		} `json:"submetrics"`
	} `json:"data"`
}

func testSamples(b *metrics.Builtin, custom *metrics.Metric) []metrics.Sample {
	base := time.Date(2026, 1, 2, 15, 4, 5, 123456789, time.UTC)
	tags := metrics.NewTags(map[string]string{"method": "GET", "status": "200", "name": "http://x/\"q\"\n", "group": ""})
	odd := metrics.NewTags(map[string]string{"note": "tab\there \x01 é \u2028 bad\xff", "url": "<&>"})
	return []metrics.Sample{
		{Metric: b.HTTPReqDuration, Tags: tags, Time: base, Value: 12.345},
		{Metric: b.HTTPReqs, Tags: tags, Time: base.Add(time.Millisecond), Value: 1},
		{Metric: b.HTTPReqDuration, Tags: odd, Time: base.Add(2 * time.Second), Value: 0.000000125},
		{Metric: custom, Tags: nil, Time: base.Add(3 * time.Second), Value: -3.25,
			Metadata: map[string]string{"vu": "7", "iter": "42"}},
		{Metric: b.Iterations, Tags: metrics.EmptyTags, Time: base.Add(4 * time.Second), Value: 1.5e21},
		{Metric: b.HTTPReqDuration, Tags: tags, Time: base.Add(5 * time.Second), Value: 0},
	}
}

func newRegistry() (*metrics.Builtin, *metrics.Metric) {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	return b, reg.MustNew("my_gauge", metrics.Gauge, metrics.Default)
}

func run(t *testing.T, p output.Params, batches ...[]metrics.Sample) {
	t.Helper()
	o, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		o.AddSamples(b)
	}
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
}

// check parses the lines and compares them with the samples.
func check(t *testing.T, r io.Reader, samples []metrics.Sample, thresholds map[string][]string) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	seen := map[string]bool{}
	i := 0
	for sc.Scan() {
		line := sc.Bytes()
		var head struct{ Type string }
		if err := stdjson.Unmarshal(line, &head); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		if head.Type == "Metric" {
			var m metricLine
			_ = stdjson.Unmarshal(line, &m)
			if seen[m.Metric] {
				t.Errorf("second Metric line for %s", m.Metric)
			}
			seen[m.Metric] = true
			if i >= len(samples) || samples[i].Metric.Name != m.Metric {
				t.Errorf("Metric line for %s not right before its first sample", m.Metric)
				continue
			}
			def := samples[i].Metric
			if m.Data.Name != def.Name || m.Data.Type != def.Type.String() || m.Data.Contains != def.Contains.String() {
				t.Errorf("Metric line %s", line)
			}
			if m.Data.Thresholds == nil || strings.Join(m.Data.Thresholds, "|") != strings.Join(thresholds[def.Name], "|") {
				t.Errorf("thresholds of %s = %#v, want %v", def.Name, m.Data.Thresholds, thresholds[def.Name])
			}
			continue
		}
		var p point
		if err := stdjson.Unmarshal(line, &p); err != nil {
			t.Fatal(err)
		}
		if i >= len(samples) {
			t.Fatalf("more points than samples: %s", line)
		}
		s := samples[i]
		i++
		if !seen[s.Metric.Name] {
			t.Errorf("point of %s before its Metric line", s.Metric.Name)
		}
		if p.Type != "Point" || p.Metric != s.Metric.Name {
			t.Errorf("point header %s", line)
		}
		tm, err := time.Parse(time.RFC3339Nano, p.Data.Time)
		if err != nil || !tm.Equal(s.Time) {
			t.Errorf("time %q, want %v (%v)", p.Data.Time, s.Time, err)
		}
		if _, off := tm.Zone(); err == nil {
			if _, want := s.Time.Local().Zone(); off != want {
				t.Errorf("time %q is not in local time", p.Data.Time)
			}
		}
		if p.Data.Value == nil || *p.Data.Value != s.Value {
			t.Errorf("value %v, want %v", p.Data.Value, s.Value)
		}
		want := map[string]string{}
		if s.Tags != nil {
			for k, v := range s.Tags.Map() {
				want[k] = string([]rune(v))
			}
		}
		if !equalMaps(p.Data.Tags, want) || p.Data.Tags == nil {
			t.Errorf("tags %v, want %v", p.Data.Tags, want)
		}
		if !equalMaps(p.Data.Metadata, s.Metadata) {
			t.Errorf("metadata %v, want %v", p.Data.Metadata, s.Metadata)
		}
		if len(s.Metadata) == 0 && bytes.Contains(line, []byte(`"metadata"`)) {
			t.Errorf("empty metadata written: %s", line)
		}
	}
	if i != len(samples) {
		t.Errorf("%d points, want %d", i, len(samples))
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestLinesRoundTrip(t *testing.T) {
	b, custom := newRegistry()
	samples := testSamples(b, custom)
	thresholds := map[string][]string{
		"http_req_duration":                           {"p(95)<500", "avg<100"},
		"http_req_duration{expected_response:true}":   {"p(99)<900"},
		"http_req_duration{status:'200', method:GET}": {"max<1000"},
	}
	path := filepath.Join(t.TempDir(), "out.json")
	run(t, output.Params{Arg: path, Thresholds: thresholds}, samples[:2], samples[2:])
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	check(t, f, samples, thresholds)

	// The submetrics of http_req_duration come from its thresholds.
	first, _ := os.ReadFile(path)
	var m metricLine
	_ = stdjson.Unmarshal(bytes.SplitN(first, []byte("\n"), 2)[0], &m)
	if len(m.Data.Submetrics) != 2 {
		t.Fatalf("submetrics = %+v", m.Data.Submetrics)
	}
	s0, s1 := m.Data.Submetrics[0], m.Data.Submetrics[1]
	if s0.Name != "http_req_duration{expected_response:true}" || s0.Suffix != "expected_response:true" || s0.Tags["expected_response"] != "true" {
		t.Errorf("submetric %+v", s0)
	}
	if !equalMaps(s1.Tags, map[string]string{"status": "200", "method": "GET"}) {
		t.Errorf("submetric %+v", s1)
	}
	// A metric without submetrics has "submetrics":null.
	if !bytes.Contains(first, []byte(`"name":"http_reqs","type":"counter","contains":"default","thresholds":[],"submetrics":null}`)) {
		t.Errorf("http_reqs Metric line not as expected:\n%s", first)
	}
}

func TestGzipAndStdout(t *testing.T) {
	b, custom := newRegistry()
	samples := testSamples(b, custom)

	path := filepath.Join(t.TempDir(), "out.json.gz")
	run(t, output.Params{Arg: path}, samples)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	check(t, zr, samples, nil)

	for _, arg := range []string{"-", ""} {
		var buf bytes.Buffer
		run(t, output.Params{Arg: arg, Stdout: &buf}, samples)
		check(t, &buf, samples, nil)
	}
}

func TestNonFiniteIsNull(t *testing.T) {
	b, _ := newRegistry()
	var buf bytes.Buffer
	run(t, output.Params{Stdout: &buf}, []metrics.Sample{
		{Metric: b.VUs, Time: time.Unix(1, 0), Value: math.NaN()},
		{Metric: b.VUs, Time: time.Unix(2, 0), Value: math.Inf(1)},
	})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for _, l := range lines[1:] {
		var p point
		if err := stdjson.Unmarshal([]byte(l), &p); err != nil || p.Data.Value != nil {
			t.Errorf("%s: value %v, err %v", l, p.Data.Value, err)
		}
	}
}

func TestFloatFormatMatchesEncodingJSON(t *testing.T) {
	for _, v := range []float64{0, 1, -1, 12.345, 1e-6, 9.99e-7, 1.25e-7, 1e20, 1e21, 123456789.125, -5e-324, math.MaxFloat64} {
		want, _ := stdjson.Marshal(v)
		if got := appendFloat(nil, v); string(got) != string(want) {
			t.Errorf("appendFloat(%v) = %s, want %s", v, got, want)
		}
	}
}

// Lines reach the file every 200 ms without waiting for Stop.
func TestPeriodicFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, custom := newRegistry()
		samples := testSamples(b, custom)
		path := filepath.Join(t.TempDir(), "out.json")
		o, _ := New(output.Params{Arg: path})
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		o.AddSamples(samples)
		time.Sleep(FlushInterval - time.Millisecond)
		synctest.Wait()
		if data, _ := os.ReadFile(path); len(data) != 0 {
			t.Errorf("written before the first tick: %d bytes", len(data))
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		data, _ := os.ReadFile(path)
		check(t, bytes.NewReader(data), samples, nil)
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := o.Stop(); err != nil {
			t.Errorf("second Stop: %v", err)
		}
		o.AddSamples(samples) // after Stop: ignored, no panic
	})
}

func TestErrors(t *testing.T) {
	o, _ := New(output.Params{Arg: filepath.Join(t.TempDir(), "missing", "out.json")})
	err := o.Start()
	if err == nil || !strings.Contains(err.Error(), "missing/out.json") || strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("Start error = %v", err)
	}
	if err := o.Stop(); err != nil {
		t.Errorf("Stop after failed Start: %v", err)
	}
	if c, ok := output.Lookup("json"); !ok || c == nil {
		t.Error("json output not registered")
	}
	if d := o.Description(); !strings.HasPrefix(d, "json (") {
		t.Errorf("Description = %q", d)
	}
}

// benchSamples is a batch shaped like HTTP samples: ten tags, few sets.
func benchSamples(n int) []metrics.Sample {
	b, _ := newRegistry()
	ms := []*metrics.Metric{b.HTTPReqDuration, b.HTTPReqWaiting, b.HTTPReqs, b.HTTPReqFailed}
	var tagSets []*metrics.TagSet
	for i := 0; i < 8; i++ {
		tagSets = append(tagSets, metrics.NewTags(map[string]string{
			"expected_response": "true", "group": "", "method": "GET", "name": "http://127.0.0.1:8080/item/" + string(rune('a'+i)),
			"proto": "HTTP/1.1", "scenario": "default", "status": "200", "url": "http://127.0.0.1:8080/item/" + string(rune('a'+i)),
		}))
	}
	base := time.Now()
	out := make([]metrics.Sample, n)
	for i := range out {
		out[i] = metrics.Sample{Metric: ms[i%len(ms)], Tags: tagSets[i%len(tagSets)], Time: base.Add(time.Duration(i) * time.Microsecond), Value: float64(i%1000) * 0.137}
	}
	return out
}

// BenchmarkAddSamplesEncode measures the whole path: AddSamples, encoding
// and writing (to io.Discard), per sample.
func BenchmarkAddSamplesEncode(b *testing.B) {
	benchWholePath(b, output.Params{Stdout: io.Discard})
}

// benchWholePath feeds b.N samples through outputs made with p and waits
// for each to write them. AddSamples never waits for the writer, which
// drops what does not fit its queue rather than slow a test; so that the
// benchmark measures the writer, not the drops, each output takes at most
// half a queue's worth and is stopped (and flushed) before the next.
func benchWholePath(b *testing.B, p output.Params) {
	const batch, round = 1000, 100_000
	samples := benchSamples(batch)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		o, _ := New(p)
		if err := o.Start(); err != nil {
			b.Fatal(err)
		}
		for end := min(done+round, b.N); done < end; done += batch {
			o.AddSamples(samples[:min(batch, end-done)])
		}
		if err := o.Stop(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkEncode measures the encoder alone.
func BenchmarkEncode(b *testing.B) {
	samples := benchSamples(1000)
	e := newEncoder(nil)
	var buf []byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = e.appendSample(buf[:0], &samples[i%len(samples)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkAddSamplesEncodeSecrets is the whole path with --secret-source
// given: no secret fetched (what every line then costs is one atomic load
// in the redacting writer) and one fetched that the samples do not hold
// (each line is scanned for it).
func BenchmarkAddSamplesEncodeSecrets(b *testing.B) {
	file := filepath.Join(b.TempDir(), "s.txt")
	if err := os.WriteFile(file, []byte("k=s3cr3t-value\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	store, err := secrets.Parse([]string{"file=" + file})
	if err != nil {
		b.Fatal(err)
	}
	for _, fetch := range []bool{false, true} {
		if fetch {
			if _, err := store.Get(secrets.DefaultName, "k"); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(map[bool]string{false: "none-fetched", true: "one-fetched"}[fetch], func(b *testing.B) {
			benchWholePath(b, output.Params{Stdout: io.Discard, Secrets: store})
		})
	}
}
