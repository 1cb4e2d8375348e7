package hdrlog

import (
	"bytes"
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
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/secrets"
)

// readCounts reads a log back with hdrhistogram-go's reader and returns
// the count of every tag over all its intervals.
func readCounts(t *testing.T, data []byte) map[string]int64 {
	t.Helper()
	r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(data))
	counts := map[string]int64{}
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			return counts
		}
		counts[h.Tag()] += h.TotalCount()
	}
}

// The raw and corrected samples of each request name are logged apart, up
// to the cap; the names met after it are logged together under
// folded=true, the same names for every metric, and both the log and the
// run's output say so. Phases, schedule_lag and the like stay per
// scenario; dropped and interrupted arrivals keep their outcome.
func TestNamesSplitAndFold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		reg := metrics.NewRegistry()
		grpc := reg.MustNew("grpc_req_duration", metrics.Trend, metrics.Time)
		custom := reg.MustNew("my_trend", metrics.Trend, metrics.Time)
		start := time.Now()
		req := func(name string) *metrics.TagSet {
			return metrics.NewTags(map[string]string{"scenario": "api", "name": name, "status": "200", "method": "GET"})
		}
		var batch []metrics.Sample
		add := func(m *metrics.Metric, tags *metrics.TagSet, v float64) {
			batch = append(batch, metrics.Sample{Metric: m, Tags: tags, Time: start, Value: v})
		}
		// Five names, one more request each than the one before, then the
		// first name again: with a cap of 3, names 4 and 5 fold.
		for i, name := range []string{"login", "GET /items?page=1", "cart;checkout", "n4", "n5", "login"} {
			for range i + 1 {
				add(b.HTTPReqDuration, req(name), 10)
				add(b.HTTPReqWaiting, req(name), 9)
				add(b.CorrectedLatency, req(name), 12)
				add(custom, req(name), 1)
			}
		}
		add(grpc, metrics.NewTags(map[string]string{"scenario": "api", "name": "/pkg.Svc/Call"}), 3) // folded: past the cap
		add(b.CorrectedLatency, req("login").With("backfilled", "true"), 2)                          // a back-fill joins its request
		add(b.CorrectedLatency, req("n4").With("outcome", "interrupted"), 900)
		add(b.CorrectedLatency, metrics.NewTags(map[string]string{"scenario": "api", "outcome": "dropped"}), 800)
		add(b.ScheduleLag, metrics.NewTags(map[string]string{"scenario": "api"}), 5)

		path := filepath.Join(t.TempDir(), "names.hlog")
		l := record(t, path, map[string]string{EnvMaxNames: "3"}, [][]metrics.Sample{batch})
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{
			"metric=http_req_duration;scenario=api;name=login":                      1 + 6,
			"metric=http_req_duration;scenario=api;name=GET%20/items?page%3D1":      2,
			"metric=http_req_duration;scenario=api;name=cart%3Bcheckout":            3,
			"metric=http_req_duration;scenario=api;folded=true":                     4 + 5,
			"metric=corrected_latency;scenario=api;name=login":                      1 + 6 + 1,
			"metric=corrected_latency;scenario=api;name=GET%20/items?page%3D1":      2,
			"metric=corrected_latency;scenario=api;name=cart%3Bcheckout":            3,
			"metric=corrected_latency;scenario=api;folded=true":                     4 + 5,
			"metric=corrected_latency;scenario=api;folded=true;outcome=interrupted": 1,
			"metric=corrected_latency;scenario=api;outcome=dropped":                 1,
			"metric=grpc_req_duration;scenario=api;folded=true":                     1,
			"metric=http_req_waiting;scenario=api":                                  21,
			"metric=my_trend;scenario=api":                                          21,
			"metric=schedule_lag;scenario=api":                                      1,
		}
		got := readCounts(t, data)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("series counts\n got %v\nwant %v", got, want)
		}
		text := string(data)
		comment := strings.Index(text, "#[metronome: more than 3 request names;")
		firstFolded := strings.Index(text, "folded=true")
		if comment < 0 || comment > firstFolded || !strings.Contains(text[comment:], "(the first: n4)") {
			t.Errorf("the log does not say, before the first folded line, that names are folded:\n%s", text)
		}
		if out := l.String(); !strings.Contains(out, `later names (the first: "n4") are logged together under folded=true`) ||
			!strings.Contains(out, "3 request names past the first 3 were logged together under folded=true (K6_HDRLOG_MAX_NAMES") {
			t.Errorf("the run's output does not say what was folded:\n%s", out)
		}
	})
}

// A script that puts an ID in every URL gets the default cap's names and
// one folded series per metric, whatever the number of URLs: 5,000 of them
// over 10 s make at most 50 + 1 series of each split metric.
func TestThousandsOfNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		start := time.Now()
		var batches [][]metrics.Sample
		for i := range 100 {
			var batch []metrics.Sample
			for k := range 50 {
				tags := metrics.NewTags(map[string]string{"scenario": "s", "name": fmt.Sprintf("https://x.test/item/%d", i*50+k)})
				at := start.Add(time.Duration(i) * 100 * time.Millisecond)
				batch = append(batch,
					metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: 1},
					metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: 2})
			}
			batches = append(batches, batch)
		}
		path := filepath.Join(t.TempDir(), "ids.hlog")
		l := record(t, path, nil, batches)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		counts := readCounts(t, data)
		if len(counts) != 2*(metrics.MaxBreakdownValues+1) {
			t.Errorf("%d series, want %d", len(counts), 2*(metrics.MaxBreakdownValues+1))
		}
		if n := counts["metric=http_req_duration;scenario=s;folded=true"]; n != 5000-metrics.MaxBreakdownValues {
			t.Errorf("%d folded requests, want %d", n, 5000-metrics.MaxBreakdownValues)
		}
		if !strings.Contains(l.String(), "4950 request names past the first 50 were logged together") {
			t.Errorf("output:\n%s", l)
		}
		// The 50 names logged apart came in the first interval; the
		// folded ones in each of the 10: a line for each, per metric.
		if lines := strings.Count(string(data), "\nTag="); lines != 2*(50+10) {
			t.Errorf("%d interval lines, want %d", lines, 2*(50+10))
		}
	})
}

func TestMaxNamesVariable(t *testing.T) {
	for _, bad := range []string{"-1", "many"} {
		_, err := New(output.Params{Arg: "x.hlog", Env: map[string]string{EnvMaxNames: bad}})
		if err == nil || !strings.HasPrefix(err.Error(), "K6_HDRLOG_MAX_NAMES:") {
			t.Errorf("%s: error %v", bad, err)
		}
	}
	// 0 logs no name apart: every request is folded, as one series a
	// metric and scenario.
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		path := filepath.Join(t.TempDir(), "none.hlog")
		tags := metrics.NewTags(map[string]string{"scenario": "s", "name": "a"})
		record(t, path, map[string]string{EnvMaxNames: "0"}, [][]metrics.Sample{{{Metric: b.HTTPReqDuration, Tags: tags, Time: time.Now(), Value: 1}}})
		data, _ := os.ReadFile(path)
		if got := readCounts(t, data); fmt.Sprint(got) != "map[metric=http_req_duration;scenario=s;folded=true:1]" {
			t.Errorf("counts %v", got)
		}
	})
}

// namedRun is a synthetic run of an open model over two scenarios and
// four request names, one of them stalled for a second: every request's
// raw duration and corrected latency, some interrupted at the end, and
// dropped arrivals. It returns the samples in per-100 ms batches and, per
// name, the sinks of its raw and corrected values.
func namedRun(b *metrics.Builtin) (batches [][]metrics.Sample, raw, corrected map[string]*metrics.TrendSink, total map[Series]*metrics.TrendSink) {
	rng := rand.New(rand.NewPCG(5, 6))
	start := time.Now()
	names := []string{"login", "search items", "cart", "https://x.test/a?b=1"}
	raw, corrected, total = map[string]*metrics.TrendSink{}, map[string]*metrics.TrendSink{}, map[Series]*metrics.TrendSink{}
	sink := func(m map[string]*metrics.TrendSink, k string) *metrics.TrendSink {
		if m[k] == nil {
			m[k] = metrics.NewTrendSink()
		}
		return m[k]
	}
	tsink := func(s Series) *metrics.TrendSink {
		if total[s] == nil {
			total[s] = metrics.NewTrendSink()
		}
		return total[s]
	}
	for i := range 100 { // 10 s of batches, 100 ms apart
		var batch []metrics.Sample
		for j := range 40 {
			sc := []string{"web", "api"}[j%2]
			name := names[(j/2)%len(names)]
			tags := metrics.NewTags(map[string]string{"scenario": sc, "name": name, "status": "200"})
			at := start.Add(time.Duration(i)*100*time.Millisecond + time.Duration(j)*2*time.Millisecond)
			d := 3 * math.Exp(rng.NormFloat64()/2)
			lag := 0.0
			if name == "cart" && i >= 30 && i < 40 { // the stall
				d += 200
				lag = rng.Float64() * 900
			}
			batch = append(batch,
				metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: d},
				metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: d + lag})
			sink(raw, name).AddValue(d)
			sink(corrected, name).AddValue(d + lag)
			tsink(Series{Metric: metrics.HTTPReqDurationName, Scenario: sc}).AddValue(d)
			tsink(Series{Metric: metrics.CorrectedLatencyName, Scenario: sc}).AddValue(d + lag)
			if j == 0 && i%10 == 0 {
				dropped := metrics.NewTags(map[string]string{"scenario": sc, "outcome": "dropped"})
				batch = append(batch, metrics.Sample{Metric: b.CorrectedLatency, Tags: dropped, Time: at, Value: 1000 + float64(i)})
				tsink(Series{Metric: metrics.CorrectedLatencyName, Scenario: sc}).AddValue(1000 + float64(i))
			}
			if i == 99 && j < 4 {
				cut := tags.With("outcome", "interrupted")
				batch = append(batch, metrics.Sample{Metric: b.CorrectedLatency, Tags: cut, Time: at, Value: 5000})
				sink(corrected, name).AddValue(5000)
				tsink(Series{Metric: metrics.CorrectedLatencyName, Scenario: sc}).AddValue(5000)
			}
		}
		batches = append(batches, batch)
	}
	return batches, raw, corrected, total
}

// TestMergeSegmentsByName splits one run over three instances, as
// execution segments do (every third request each), and checks that
// merging their logs gives, per request name and per metric and
// scenario, exactly the counts and percentiles of the whole run: those
// of its end-of-test sinks, and those of one instance that ran it all.
func TestMergeSegmentsByName(t *testing.T) {
	dir := t.TempDir()
	b := metrics.RegisterBuiltin(metrics.NewRegistry())
	var all [][]metrics.Sample
	var raw, corrected map[string]*metrics.TrendSink
	var total map[Series]*metrics.TrendSink
	synctest.Test(t, func(t *testing.T) {
		all, raw, corrected, total = namedRun(b)
		record(t, filepath.Join(dir, "all.hlog"), nil, all)
	})
	var segs []string
	for k := range 3 {
		path := filepath.Join(dir, fmt.Sprintf("segment-%d.hlog", k))
		segs = append(segs, path)
		synctest.Test(t, func(t *testing.T) {
			var mine [][]metrics.Sample
			for _, batch := range all {
				var part []metrics.Sample
				for i, s := range batch {
					if i%3 == k {
						part = append(part, s)
					}
				}
				mine = append(mine, part)
			}
			record(t, path, nil, mine)
		})
	}
	merged, whole := NewMerger(), NewMerger()
	for _, p := range segs {
		addFile(t, merged, p)
	}
	addFile(t, whole, filepath.Join(dir, "all.hlog"))

	eps := merged.Endpoints()
	if len(eps) != len(raw) {
		t.Fatalf("%d endpoints, want %d: %+v", len(eps), len(raw), eps)
	}
	wholeEps := whole.Endpoints()
	for i, e := range eps {
		if e.Folded || e.RawMetric != metrics.HTTPReqDurationName || e.Raw == nil || e.Corrected == nil {
			t.Fatalf("endpoint %+v", e)
		}
		sum, ws := e.Summarize(percentiles.ByName), wholeEps[i].Summarize(percentiles.ByName)
		if fmt.Sprint(sum) != fmt.Sprint(ws) {
			t.Errorf("%s: segments %+v, whole %+v", e.Name, sum, ws)
		}
		for kind, c := range map[string]struct {
			got  int64
			pcts map[string]float64
			want *metrics.TrendSink
		}{"raw": {sum.Requests, sum.Raw, raw[e.Name]}, "corrected": {sum.CorrectedSamples, sum.Corrected, corrected[e.Name]}} {
			if c.got != c.want.Count() {
				t.Errorf("%s %s: %d samples, want exactly %d", e.Name, kind, c.got, c.want.Count())
			}
			// The summary's estimator over the same buckets: equal but
			// where the sink keeps an exact value (within half a bucket).
			for _, p := range percentiles.ByName {
				got, want := c.pcts[percentiles.StatName(p)], c.want.Percentile(p)
				if math.Abs(got-want) > want/2000 {
					t.Errorf("%s %s p%g: %g ms, want %g ms", e.Name, kind, p, got, want)
				}
			}
		}
	}
	// The stalled endpoint's corrected tail is far above its raw one.
	for _, e := range eps {
		s := e.Summarize(percentiles.ByName)
		if stalled := e.Name == "cart"; stalled != (s.Corrected["p(99)"] > 2*s.Raw["p(99)"]) {
			t.Errorf("%s: raw p99 %g ms, corrected p99 %g ms", e.Name, s.Raw["p(99)"], s.Corrected["p(99)"])
		}
	}
	// Per metric and scenario, the names and outcomes add up to the run's.
	dists := merged.Distributions()
	if len(dists) != len(total) {
		t.Fatalf("%d distributions, want %d", len(dists), len(total))
	}
	for _, d := range dists {
		s := d.Summarize(percentiles.Table)
		want := total[Series{Metric: d.Metric, Scenario: strings.TrimPrefix(d.Labels, "scenario=")}]
		if want == nil || s.Count != want.Count() {
			t.Errorf("%s %s: %d samples, want %v", d.Metric, d.Labels, s.Count, want)
			continue
		}
		if p := want.Percentile(99); math.Abs(s.Percentiles["p99"]-p) > p/2000 {
			t.Errorf("%s %s p99: %g ms, want %g ms", d.Metric, d.Labels, s.Percentiles["p99"], p)
		}
	}
}

func addFile(t *testing.T, m *Merger, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := m.Add(f, path); err != nil {
		t.Fatal(err)
	}
}

// A log of the previous format (metric and scenario only, names cleaned
// with '_') still merges: per metric and scenario, with no endpoints.
func TestMergeReadsPreviousFormat(t *testing.T) {
	var log bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&log)
	if err := w.OutputLogFormatVersion(); err != nil {
		t.Fatal(err)
	}
	for i, tag := range []string{"metric=http_req_duration;scenario=my_api", "metric=corrected_latency;scenario=my_api", "metric=http_req_duration;scenario=my_api"} {
		h := hdrhistogram.New(Lowest, Highest, SignificantDigits)
		for v := int64(1); v <= 100; v++ {
			_ = h.RecordValue(v * 1000 * int64(i+1))
		}
		h.SetTag(tag)
		h.SetStartTimeMs(1_700_000_000_000 + int64(i%2)*1000)
		h.SetEndTimeMs(1_700_000_001_000 + int64(i%2)*1000)
		if err := w.OutputIntervalHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
	m := NewMerger()
	if err := m.Add(&log, "old.hlog"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range m.Distributions() {
		got = append(got, fmt.Sprintf("%s %s %d", d.Metric, d.Labels, d.Hist.TotalCount()))
	}
	if want := "[corrected_latency scenario=my_api 100 http_req_duration scenario=my_api 200]"; fmt.Sprint(got) != want {
		t.Errorf("distributions %v, want %s", got, want)
	}
	if eps := m.Endpoints(); len(eps) != 0 {
		t.Errorf("an old log has no names, got %+v", eps)
	}
}

func TestEndpointTableAndJSON(t *testing.T) {
	m := NewMerger()
	put := func(s Series, vals ...int64) {
		h := hdrhistogram.NewPacked(Lowest, Highest, SignificantDigits)
		for _, v := range vals {
			_ = h.RecordValue(v)
		}
		m.merge(&Interval{Tag: s.Tag(), Start: time.UnixMilli(1_700_000_000_000), End: time.UnixMilli(1_700_000_001_000), Hist: h})
	}
	put(Series{Metric: "http_req_duration", Scenario: "a", Name: "fast one"}, 1000, 2000)
	put(Series{Metric: "corrected_latency", Scenario: "a", Name: "fast one"}, 1000, 2000)
	put(Series{Metric: "http_req_duration", Scenario: "a", Name: "slow"}, 1000)
	put(Series{Metric: "http_req_duration", Scenario: "b", Name: "slow"}, 3000)
	put(Series{Metric: "corrected_latency", Scenario: "b", Name: "slow"}, 500_000, 3000)
	put(Series{Metric: "ws_connecting", Scenario: "b", Name: "ws only"}, 4000)
	put(Series{Metric: "corrected_latency", Scenario: "b", Folded: true}, 7000)
	var sums []percentiles.EndpointSummary
	for _, e := range m.Endpoints() {
		sums = append(sums, e.Summarize(percentiles.ByName))
	}
	percentiles.SortEndpoints(sums)
	var tb bytes.Buffer
	if err := percentiles.WriteEndpointTable(&tb, sums, percentiles.ByName); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(tb.String(), "\n"), "\n")
	wantStart := []string{"name ", "slow ", "fast one ", "ws only ", percentiles.FoldedName}
	if len(lines) != len(wantStart) {
		t.Fatalf("table:\n%s", tb.String())
	}
	for i, w := range wantStart {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d %q, want it to start with %q", i, lines[i], w)
		}
	}
	for _, w := range []string{"raw p99.9", "corrected p50"} {
		if !strings.Contains(lines[0], w) {
			t.Errorf("header %q lacks %q", lines[0], w)
		}
	}
	// slow: raw 1 and 3 ms from two scenarios (2 requests), corrected 3 ms
	// and 500 ms, whose p99.9 interpolates to 499.6 ms; ws only: no
	// corrected samples.
	if f := strings.Fields(lines[1]); len(f) != 8 || f[1] != "2" || f[4] != "3ms" || f[7] != "499.6ms" {
		t.Errorf("slow row %q", lines[1])
	}
	if f := strings.Fields(lines[3]); len(f) != 9 || f[8] != "n/a" || f[3] != "4ms" {
		t.Errorf("ws only row %q", lines[3])
	}
	var jb bytes.Buffer
	if err := percentiles.WriteEndpointJSON(&jb, sums); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"name": "slow"`, `"rawMetric": "ws_connecting"`, `"p(99.9)": 499.59`, `"folded": true`, `"correctedSamples": 2`} {
		if !strings.Contains(jb.String(), w) {
			t.Errorf("JSON lacks %s:\n%s", w, jb.String())
		}
	}
}

// A request name (or scenario) that holds a secret the script fetched,
// or a custom Trend named by one, is written with the secret masked, as
// every output's text is.
func TestNamesHideSecrets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "s.txt")
		if err := os.WriteFile(file, []byte("token=tok-7f3a9c\nmetric=tok7f3a9c\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		store, err := secrets.Parse([]string{"file=" + file})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"token", "metric"} {
			if _, err := store.Get(secrets.DefaultName, name); err != nil {
				t.Fatal(err)
			}
		}
		reg := metrics.NewRegistry()
		b := metrics.RegisterBuiltin(reg)
		custom := reg.MustNew("tok7f3a9c", metrics.Trend, metrics.Time)
		path := filepath.Join(dir, "run.hlog")
		out, err := New(output.Params{Arg: path, Secrets: store})
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Start(); err != nil {
			t.Fatal(err)
		}
		tags := metrics.NewTags(map[string]string{"scenario": "s", "name": "https://api.test/login?key=tok-7f3a9c"})
		out.AddSamples([]metrics.Sample{
			{Metric: b.HTTPReqDuration, Tags: tags, Time: time.Now(), Value: 5},
			{Metric: b.CorrectedLatency, Tags: tags, Time: time.Now(), Value: 7},
			{Metric: custom, Tags: tags, Time: time.Now(), Value: 9},
		})
		if err := out.Stop(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "7f3a9c") || !strings.Contains(string(data), ";name=") ||
			!strings.Contains(string(data), "Tag=metric="+secrets.Mask+";") {
			t.Errorf("the log does not mask the secret in the name and the metric:\n%s", data)
		}
	})
}

// A request name longer than a log line can hold (a URL with a 5 MB
// query) is logged cut, marked so, and the run is told once: before, its
// line was over 4 MiB and every reader of the log skipped it, losing the
// name's histograms (hostile probe 4, #7).
func TestLongNamesAreCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		big := strings.Repeat("n", 5_000_000)
		bigger := strings.Repeat("é", 3_000_000) // 6 MB, 18 MB encoded
		var batch []metrics.Sample
		for _, name := range []string{big, bigger, "small"} {
			tags := metrics.NewTags(map[string]string{"scenario": "s", "name": name})
			for range 20 {
				batch = append(batch,
					metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: time.Now(), Value: 10},
					metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: time.Now(), Value: 12})
			}
		}
		path := filepath.Join(t.TempDir(), "big.hlog")
		l := record(t, path, nil, [][]metrics.Sample{batch})
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		lr := NewLogReader(f, path)
		names := map[string]int64{}
		for {
			iv, err := lr.Next()
			if err != nil {
				break
			}
			s := ParseTag(iv.Tag)
			names[s.Name] += iv.Hist.TotalCount()
		}
		if w := lr.Warnings(); len(w) > 0 {
			t.Errorf("the log's reader skipped lines: %v", w)
		}
		want := map[string]int64{
			"small": 40,
			strings.Repeat("n", MaxTagValueBytes-encodedLen("…[cut from 5000000 bytes]")) + "…[cut from 5000000 bytes]": 40,
		}
		var cutBigger string
		for name, n := range names {
			if strings.HasSuffix(name, "…[cut from 6000000 bytes]") && n == 40 {
				cutBigger = name
			}
		}
		if cutBigger == "" || !strings.HasPrefix(cutBigger, "éé") {
			t.Errorf("the 6 MB name is not logged cut")
		}
		delete(names, cutBigger)
		if len(names) != len(want) {
			t.Errorf("%d names logged, want %d", len(names), len(want))
		}
		for name, n := range want {
			if names[name] != n {
				t.Errorf("name of %d bytes: %d values, want %d", len(name), names[name], n)
			}
		}
		if got := strings.Count(l.String(), "is logged cut"); got != 1 {
			t.Errorf("the run was told %d times of cut names, want once:\n%s", got, l.String())
		}
	})
}
