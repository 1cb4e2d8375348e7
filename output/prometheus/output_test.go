package prometheus

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/metronome-load/metronome/internal/testkit/logtest"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/prometheus/prometheus/prompb"
)

// fakeServer is a remote-write receiver behind an http.RoundTripper, so
// tests run without a network and inside synctest bubbles.
type fakeServer struct {
	mu      sync.Mutex
	reqs    []*prompb.WriteRequest
	headers []http.Header
	// respond, when set, decides the answer; hang makes every request
	// wait until it is cancelled.
	respond func(req *prompb.WriteRequest) (int, string)
	hang    bool
	calls   int
}

func (f *fakeServer) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.calls++
	hang := f.hang
	f.mu.Unlock()
	if hang {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	var wr prompb.WriteRequest
	if err := wr.Unmarshal(raw); err != nil {
		return nil, fmt.Errorf("protobuf: %w", err)
	}
	status, msg := http.StatusNoContent, ""
	if f.respond != nil {
		status, msg = f.respond(&wr)
	}
	f.mu.Lock()
	if status/100 == 2 {
		f.reqs = append(f.reqs, &wr)
		f.headers = append(f.headers, r.Header.Clone())
	}
	f.mu.Unlock()
	return &http.Response{
		StatusCode: status,
		Status:     fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Body:       io.NopCloser(strings.NewReader(msg)),
		Header:     http.Header{},
		Request:    r,
	}, nil
}

// point is one received value.
type point struct {
	ts int64
	v  float64
	h  *prompb.Histogram
}

// received returns every value per series, keyed by its label string
// (name{a="b",...}) in arrival order.
func (f *fakeServer) received() map[string][]point {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]point{}
	for _, r := range f.reqs {
		for _, ts := range r.Timeseries {
			k := seriesString(ts.Labels)
			for _, s := range ts.Samples {
				out[k] = append(out[k], point{ts: s.Timestamp, v: s.Value})
			}
			for i := range ts.Histograms {
				h := ts.Histograms[i]
				out[k] = append(out[k], point{ts: h.Timestamp, h: &h})
			}
		}
	}
	return out
}

func seriesString(labels []prompb.Label) string {
	if !sort.SliceIsSorted(labels, func(i, j int) bool { return labels[i].Name < labels[j].Name }) {
		return "UNSORTED"
	}
	var name string
	var rest []string
	for _, l := range labels {
		if l.Name == "__name__" {
			name = l.Value
			continue
		}
		rest = append(rest, fmt.Sprintf("%s=%q", l.Name, l.Value))
	}
	return name + "{" + strings.Join(rest, ",") + "}"
}

// last returns the newest value of a series, failing when absent.
func last(t *testing.T, got map[string][]point, key string) point {
	t.Helper()
	p := got[key]
	if len(p) == 0 {
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Fatalf("no series %s; got:\n%s", key, strings.Join(keys, "\n"))
	}
	return p[len(p)-1]
}

type logs = logtest.Lines

func newTestOutput(t *testing.T, env map[string]string, srv *fakeServer) (*Output, *logs) {
	t.Helper()
	l := &logs{}
	o, err := newOutput(output.Params{Env: env, Logf: l.Logf}, srv)
	if err != nil {
		t.Fatal(err)
	}
	return o, l
}

func TestRegistered(t *testing.T) {
	for _, name := range []string{"experimental-prometheus-rw", "prometheus"} {
		if _, ok := output.Lookup(name); !ok {
			t.Errorf("output %q is not registered", name)
		}
	}
}

// TestNamesLabelsAndValues checks k6's naming and the cumulative values on
// the final push.
func TestNamesLabelsAndValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		b := metrics.RegisterBuiltin(reg)
		srv := &fakeServer{}
		o, l := newTestOutput(t, map[string]string{
			"K6_PROMETHEUS_RW_TREND_STATS":      "p(99),p(99.9),avg,min,max,med,count,sum",
			"K6_PROMETHEUS_RW_HEADERS_X-Tenant": "team-a",
			"K6_PROMETHEUS_RW_BEARER_TOKEN":     "s3cret",
		}, srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		tags := metrics.NewTags(map[string]string{"scenario": "api", "testid": "x1", "group": "", "my-tag": "v"})
		now := time.Now()
		sink := metrics.NewTrendSink()
		var batch []metrics.Sample
		for i := range 100 {
			v := float64(i*i) / 7
			sink.AddValue(v)
			batch = append(batch,
				metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: now.Add(time.Duration(i) * time.Millisecond), Value: v},
				metrics.Sample{Metric: b.HTTPReqs, Tags: tags, Time: now, Value: 1, Metadata: map[string]string{"vu": "3"}},
				metrics.Sample{Metric: b.HTTPReqFailed, Tags: tags, Time: now, Value: float64(i % 4 / 3)},
				metrics.Sample{Metric: b.VUs, Tags: metrics.EmptyTags, Time: now.Add(time.Duration(i) * time.Millisecond), Value: float64(i)},
			)
		}
		o.AddSamples(batch)
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		got := srv.received()
		lbl := `{my_tag="v",scenario="api",testid="x1"}`
		if p := last(t, got, "k6_http_reqs_total"+lbl); p.v != 100 {
			t.Errorf("k6_http_reqs_total = %g, want 100", p.v)
		}
		if p := last(t, got, "k6_http_req_failed_rate"+lbl); p.v != 0.25 {
			t.Errorf("k6_http_req_failed_rate = %g, want 0.25", p.v)
		}
		if p := last(t, got, "k6_vus{}"); p.v != 99 {
			t.Errorf("k6_vus = %g, want 99", p.v)
		}
		for suffix, want := range map[string]float64{
			"p99": sink.Percentile(99) / 1000, "p999": sink.Percentile(99.9) / 1000,
			"avg": sink.Avg() / 1000, "min": sink.Min() / 1000, "max": sink.Max() / 1000,
			"med": sink.Med() / 1000, "count": 100, "sum": sink.Sum() / 1000,
		} {
			p := last(t, got, "k6_corrected_latency_"+suffix+lbl)
			if math.Abs(p.v-want) > 1e-12*math.Max(1, want) {
				t.Errorf("k6_corrected_latency_%s = %g, want %g", suffix, p.v, want)
			}
			if want := now.Add(99 * time.Millisecond).UnixMilli(); p.ts != want {
				t.Errorf("k6_corrected_latency_%s at %d, want the newest sample's time %d", suffix, p.ts, want)
			}
		}
		if _, ok := got["UNSORTED"]; ok {
			t.Error("labels were not sorted by name")
		}
		h := srv.headers[0]
		if h.Get("X-Tenant") != "team-a" || h.Get("Authorization") != "Bearer s3cret" ||
			h.Get("Content-Encoding") != "snappy" || h.Get("X-Prometheus-Remote-Write-Version") != "0.1.0" {
			t.Errorf("request headers %v", h)
		}
		if l.String() != "" {
			t.Errorf("unexpected log: %s", l)
		}
	})
}

func TestNativeHistograms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		b := metrics.RegisterBuiltin(reg)
		size := reg.MustNew("payload", metrics.Trend, metrics.Data)
		plain := reg.MustNew("score", metrics.Trend, metrics.Default)
		srv := &fakeServer{}
		o, _ := newTestOutput(t, map[string]string{"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM": "true"}, srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		o.AddSamples([]metrics.Sample{
			{Metric: b.CorrectedLatency, Tags: metrics.EmptyTags, Time: now, Value: 250},
			{Metric: b.CorrectedLatency, Tags: metrics.EmptyTags, Time: now, Value: 1000},
			{Metric: size, Tags: metrics.EmptyTags, Time: now, Value: 2048},
			{Metric: plain, Tags: metrics.EmptyTags, Time: now, Value: 3},
			{Metric: b.HTTPReqs, Tags: metrics.EmptyTags, Time: now, Value: 1},
		})
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		got := srv.received()
		h := last(t, got, "k6_corrected_latency_seconds{}").h
		if h == nil || h.GetCountInt() != 2 || h.Sum != 1.25 {
			t.Fatalf("corrected_latency histogram %+v", h)
		}
		// 0.25 s = 2^-2 and 1 s = 2^0 are bucket upper bounds: -16 and 0.
		if len(h.PositiveSpans) != 2 || h.PositiveSpans[0].Offset != -16 || h.PositiveSpans[1].Offset != 15 {
			t.Errorf("spans %+v", h.PositiveSpans)
		}
		if h := last(t, got, "k6_payload_bytes{}").h; h == nil || h.Sum != 2048 {
			t.Errorf("data trend histogram %+v", h)
		}
		if h := last(t, got, "k6_score{}").h; h == nil || h.Sum != 3 {
			t.Errorf("default trend histogram %+v", h)
		}
		if p := last(t, got, "k6_http_reqs_total{}"); p.v != 1 {
			t.Errorf("counter %g", p.v)
		}
		for k := range got {
			if strings.HasPrefix(k, "k6_corrected_latency_p") {
				t.Errorf("trend stats sent in native mode: %s", k)
			}
		}
		for _, r := range srv.reqs {
			var floats, hists int
			for _, ts := range r.Timeseries {
				floats += len(ts.Samples)
				hists += len(ts.Histograms)
			}
			if floats > 0 && hists > 0 {
				t.Error("floats and histograms in one request")
			}
		}
	})
}

// TestCumulativeAcrossPushes checks that pushes happen every interval,
// carry running totals, and move every series forward in time.
func TestCumulativeAcrossPushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		b := metrics.RegisterBuiltin(reg)
		srv := &fakeServer{}
		o, l := newTestOutput(t, map[string]string{"K6_PROMETHEUS_RW_PUSH_INTERVAL": "1s", "K6_PROMETHEUS_RW_STALE_MARKERS": "true"}, srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for i := range 3 {
			// All samples carry the same millisecond: the output must
			// still move the series forward.
			o.AddSamples([]metrics.Sample{
				{Metric: b.Iterations, Tags: metrics.EmptyTags, Time: start, Value: 1},
				{Metric: b.Iterations, Tags: metrics.EmptyTags, Time: start, Value: 1},
			})
			time.Sleep(1500 * time.Millisecond)
			synctest.Wait()
			if n := len(srv.received()["k6_iterations_total{}"]); n != i+1 {
				t.Fatalf("after %d intervals: %d pushes", i+1, n)
			}
		}
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		pts := srv.received()["k6_iterations_total{}"]
		if len(pts) != 4 {
			t.Fatalf("%d values, want 3 pushes and a stale marker", len(pts))
		}
		for i, p := range pts[:3] {
			if p.v != float64(2*(i+1)) {
				t.Errorf("push %d: %g, want %d", i, p.v, 2*(i+1))
			}
			if i > 0 && p.ts <= pts[i-1].ts {
				t.Errorf("push %d at %d, not after %d", i, p.ts, pts[i-1].ts)
			}
		}
		if p := pts[3]; math.Float64bits(p.v) != math.Float64bits(staleNaN) || p.ts <= pts[2].ts {
			t.Errorf("stale marker %+v", p)
		}
		if l.String() != "" {
			t.Errorf("unexpected log: %s", l)
		}
	})
}

// TestHangingServer checks that a server that never answers neither blocks
// AddSamples nor keeps Stop beyond its budget, and that the loss is
// reported.
func TestHangingServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		b := metrics.RegisterBuiltin(reg)
		srv := &fakeServer{hang: true}
		o, l := newTestOutput(t, map[string]string{"K6_PROMETHEUS_RW_PUSH_INTERVAL": "100ms"}, srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		// 60 s of samples, one batch each 10 ms: every AddSamples call
		// must return at once (virtual time does not move inside it).
		for i := range 6000 {
			before := time.Now()
			o.AddSamples([]metrics.Sample{{Metric: b.HTTPReqs, Tags: metrics.EmptyTags, Time: before, Value: 1}})
			if time.Since(before) != 0 {
				t.Fatalf("AddSamples %d blocked for %v", i, time.Since(before))
			}
			time.Sleep(10 * time.Millisecond)
		}
		stopAt := time.Now()
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		if took, limit := time.Since(stopAt), stopBacklogTimeout+finalPushTimeout; took > limit {
			t.Errorf("Stop took %v, budget %v", took, limit)
		}
		out := l.String()
		t.Logf("Stop took %v; %d attempts; log:\n%s", time.Since(stopAt), srv.calls, out)
		if !strings.Contains(out, "were dropped because the server did not keep up") ||
			!strings.Contains(out, "were not delivered") {
			t.Errorf("loss not reported:\n%s", out)
		}
		// Each request is retried with backoff: with 5 s per attempt and 4
		// attempts, 60 s leave room for a handful of pushes.
		if srv.calls < 4 || srv.calls > 60 {
			t.Errorf("%d attempts", srv.calls)
		}
	})
}

// TestInputBufferFull checks that a full input buffer drops and counts
// instead of blocking.
func TestInputBufferFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		b := metrics.RegisterBuiltin(reg)
		srv := &fakeServer{}
		o, l := newTestOutput(t, nil, srv)
		// Before Start nothing drains the buffer.
		for range inputBuffer + 3 {
			o.AddSamples([]metrics.Sample{
				{Metric: b.HTTPReqs, Tags: metrics.EmptyTags, Time: time.Now(), Value: 1},
				{Metric: b.HTTPReqs, Tags: metrics.EmptyTags, Time: time.Now(), Value: 1},
			})
		}
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		// The totals sent lack the dropped samples: that fails the run.
		if err := o.Stop(); err == nil || !strings.Contains(err.Error(), "6 samples were dropped") {
			t.Errorf("Stop = %v, want an error counting the 6 dropped samples (log: %q)", err, l)
		}
		if p := last(t, srv.received(), "k6_http_reqs_total{}"); p.v != 2*inputBuffer {
			t.Errorf("delivered total %g, want %d", p.v, 2*inputBuffer)
		}
	})
}

// TestServerErrors checks retries on 5xx, no retry on 4xx, and the hint
// when the server refuses native histograms while floats still arrive.
func TestServerErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		b := metrics.RegisterBuiltin(reg)
		attempts := 0
		srv := &fakeServer{}
		srv.respond = func(r *prompb.WriteRequest) (int, string) {
			if len(r.Timeseries[0].Histograms) > 0 {
				return 500, "native histograms are disabled"
			}
			attempts++
			if attempts <= 2 {
				return 503, "busy"
			}
			return 204, ""
		}
		o, l := newTestOutput(t, map[string]string{"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM": "true"}, srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		o.AddSamples([]metrics.Sample{
			{Metric: b.HTTPReqs, Tags: metrics.EmptyTags, Time: time.Now(), Value: 1},
			{Metric: b.HTTPReqDuration, Tags: metrics.EmptyTags, Time: time.Now(), Value: 12},
		})
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		if p := last(t, srv.received(), "k6_http_reqs_total{}"); p.v != 1 || attempts != 3 {
			t.Errorf("counter %g after %d attempts, want 1 after 3", p.v, attempts)
		}
		if out := l.String(); !strings.Contains(out, "--enable-feature=native-histograms") || !strings.Contains(out, "1 of 2 pushes") {
			t.Errorf("log:\n%s", out)
		}
	})

	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		b := metrics.RegisterBuiltin(reg)
		srv := &fakeServer{respond: func(*prompb.WriteRequest) (int, string) { return 400, "out of order sample" }}
		o, l := newTestOutput(t, nil, srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		o.AddSamples([]metrics.Sample{{Metric: b.HTTPReqs, Tags: metrics.EmptyTags, Time: time.Now(), Value: 1}})
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		if srv.calls != 1 {
			t.Errorf("a 400 was retried: %d calls", srv.calls)
		}
		if !strings.Contains(l.String(), "out of order sample") {
			t.Errorf("log: %s", l)
		}
	})
}

func TestLabelName(t *testing.T) {
	for in, want := range map[string]string{
		"scenario": "scenario", "expected_response": "expected_response", "my-tag": "my_tag",
		"1st": "_1st", "a.b c": "a_b_c", "Name9": "Name9",
	} {
		if got := labelName(in); got != want {
			t.Errorf("labelName(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkIngest measures the aggregator's cost per sample: one HTTP
// request's worth of samples (a trend, a counter, a rate) over 20 series.
func BenchmarkIngest(b *testing.B) {
	for _, native := range []bool{false, true} {
		b.Run(map[bool]string{false: "stats", true: "native"}[native], func(b *testing.B) {
			bi := metrics.RegisterBuiltin(metrics.NewRegistry())
			o, err := newOutput(output.Params{Env: map[string]string{"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM": fmt.Sprint(native)}}, &fakeServer{})
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			batch := make([]metrics.Sample, 0, 999)
			for i := range 333 {
				tags := metrics.NewTags(map[string]string{"scenario": "s", "name": fmt.Sprint("u", i%20)})
				batch = append(batch,
					metrics.Sample{Metric: bi.HTTPReqDuration, Tags: tags, Time: now, Value: float64(i%97) + 0.5},
					metrics.Sample{Metric: bi.HTTPReqs, Tags: tags, Time: now, Value: 1},
					metrics.Sample{Metric: bi.HTTPReqFailed, Tags: tags, Time: now, Value: 0})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				o.ingest(batch)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/sample")
		})
	}
}

// Tag names that sanitise to the same label ("x-y" and "x.y" → x_y) keep
// their series apart: the first keeps the readable label, the other is
// escaped, and the collision is logged once, naming both. Merged, the
// counters would overwrite each other in Prometheus.
func TestCollidingTagNamesStayApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		srv := &fakeServer{}
		o, l := newTestOutput(t, nil, srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		dash := metrics.NewTags(map[string]string{"x-y": "1"})
		dot := metrics.NewTags(map[string]string{"x.y": "1"})
		both := metrics.NewTags(map[string]string{"x-y": "a", "x.y": "b"})
		now := time.Now()
		var batch []metrics.Sample
		for range 3 {
			batch = append(batch, metrics.Sample{Metric: b.HTTPReqs, Tags: dash, Time: now, Value: 1})
		}
		for range 5 {
			batch = append(batch, metrics.Sample{Metric: b.HTTPReqs, Tags: dot, Time: now, Value: 1})
		}
		batch = append(batch, metrics.Sample{Metric: b.HTTPReqs, Tags: both, Time: now, Value: 1})
		o.AddSamples(batch)
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		got := srv.received()
		if p := last(t, got, `k6_http_reqs_total{x_y="1"}`); p.v != 3 {
			t.Errorf("x-y series = %v, want 3", p.v)
		}
		if p := last(t, got, `k6_http_reqs_total{U__x_2e_y="1"}`); p.v != 5 {
			t.Errorf("x.y series = %v, want 5", p.v)
		}
		if p := last(t, got, `k6_http_reqs_total{U__x_2e_y="b",x_y="a"}`); p.v != 1 {
			t.Errorf("series with both tags = %v, want 1", p.v)
		}
		want := `prometheus remote write: the tags "x-y" and "x.y" both become the label "x_y"; "x.y" is sent as the label "U__x_2e_y" so that their series stay apart`
		if l.String() != want {
			t.Errorf("log:\n%s\nwant exactly:\n%s", l, want)
		}
	})
}

func TestEscapedLabelName(t *testing.T) {
	for in, want := range map[string]string{
		"x.y": "U__x_2e_y", "x-y": "U__x_2d_y", "x_y": "U__x__y", "é": "U___e9_", "1a": "U__1a",
	} {
		if got := escapedLabelName(in); got != want {
			t.Errorf("escapedLabelName(%q) = %q, want %q", in, got, want)
		}
	}
}

// No credential reaches a message: not the URL's password (banner,
// warnings, the end report), not the token or a credential header echoed
// back in the server's error.
func TestSecretsStayOutOfMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		srv := &fakeServer{respond: func(*prompb.WriteRequest) (int, string) {
			return 401, "denied: Authorization: Basic Ym9iOmh1bnRlcjJwdw== (bob:hunter2pw), header X-Api-Key=k3y-v4lue, token s3cretTok"
		}}
		o, l := newTestOutput(t, map[string]string{
			"K6_PROMETHEUS_RW_SERVER_URL":        "http://bob:hunter2pw@prom.test/api/v1/write",
			"K6_PROMETHEUS_RW_HEADERS_X-Api-Key": "k3y-v4lue",
		}, srv)
		o.cfg.BearerToken = "s3cretTok" // as K6_PROMETHEUS_RW_BEARER_TOKEN, which USERNAME (the URL's) excludes
		o.secrets = o.cfg.secrets()
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		o.AddSamples([]metrics.Sample{{Metric: b.HTTPReqs, Tags: metrics.EmptyTags, Time: time.Now(), Value: 1}})
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		all := o.Description() + "\n" + l.String()
		if !strings.Contains(all, "denied") || !strings.Contains(all, "http://bob:xxxxx@prom.test/api/v1/write") {
			t.Errorf("the failure or the redacted URL is not reported:\n%s", all)
		}
		for _, secret := range []string{"hunter2pw", "Ym9iOmh1bnRlcjJwdw", "k3y-v4lue", "s3cretTok"} {
			if strings.Contains(all, secret) {
				t.Errorf("%q leaked:\n%s", secret, all)
			}
		}
	})
	_, err := ParseConfig(map[string]string{"K6_PROMETHEUS_RW_SERVER_URL": "ftp://bob:hunter2pw@prom.test/"}, "")
	if err == nil || strings.Contains(err.Error(), "hunter2pw") || !strings.Contains(err.Error(), "ftp://bob:xxxxx@prom.test/") {
		t.Errorf("ParseConfig error = %v, want it to quote the URL without its password", err)
	}
}
