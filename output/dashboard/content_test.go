package dashboard

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// liveOutput is a started dashboard that has rendered a minute of two
// request names.
func liveOutput(tb testing.TB) *Output {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	o, err := New(output.Params{Now: func() time.Time { return now }, Env: map[string]string{EnvPort: "-1", EnvPeriod: "1s"}})
	if err != nil {
		tb.Fatal(err)
	}
	d := o.(*Output)
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	var batch []metrics.Sample
	for i := range 600 {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		tags := metrics.EmptyTags.With("name", []string{"GET /a", "GET /b"}[i%2])
		batch = append(batch,
			metrics.Sample{Metric: b.HTTPReqs, Tags: tags, Time: at, Value: 1},
			metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: float64(i % 37)},
			metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: float64(i % 41)})
	}
	d.agg = NewAggregator(t0, time.Second)
	d.agg.Add(batch)
	now = t0.Add(time.Minute)
	if err := d.render(false); err != nil {
		tb.Fatal(err)
	}
	return d
}

// /api/content answers the rendered part and whether the run ended, as
// JSON, before and after the first render.
func TestServeContent(t *testing.T) {
	o, err := New(output.Params{Env: map[string]string{EnvPort: "-1"}})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		HTML string `json:"html"`
		Done *bool  `json:"done"`
	}
	rec := httptest.NewRecorder()
	o.(*Output).serveContent(rec, httptest.NewRequest("GET", "/api/content", nil))
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.HTML != "" || got.Done == nil || *got.Done {
		t.Fatalf("before a render: %v %q", err, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	liveOutput(t).serveContent(rec, httptest.NewRequest("GET", "/api/content", nil))
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.HTML) < 1000 || got.Done == nil || *got.Done {
		t.Fatalf("after a render: %v, %d bytes of HTML", err, len(got.HTML))
	}
}

// BenchmarkServeContent is what one poll of /api/content costs the
// generator.
func BenchmarkServeContent(b *testing.B) {
	d := liveOutput(b)
	req := httptest.NewRequest("GET", "/api/content", nil)
	b.ReportAllocs()
	for b.Loop() {
		d.serveContent(httptest.NewRecorder(), req)
	}
}
