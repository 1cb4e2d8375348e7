package summary

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// windowedInput is one metric with a windowed threshold that failed in two
// stretches and a whole-run one, and a counter whose windowed rate passed.
func windowedInput() *Input {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	s := time.Second
	return &Input{
		State: State{TestRunDuration: 2 * time.Minute},
		Metrics: []Metric{
			{Name: "http_reqs", Metric: b.HTTPReqs, Sink: &metrics.CounterSink{Sum: 12000, Count: 12000},
				Thresholds: []Threshold{{Source: "rate>50", OK: true, Window: time.Minute,
					Windows: WindowVerdict{Judged: 61, Value: 98.5, Worst: metrics.WindowSpan{From: 12 * s, To: 72 * s}}}}},
			{Name: "http_req_duration", Metric: b.HTTPReqDuration, Sink: trendOf(seq(100, 10, 0)),
				Thresholds: []Threshold{
					{Source: "p(99)<500", OK: true},
					{Source: "p(99)<500", OK: false, Window: 10 * s, Windows: WindowVerdict{
						Judged: 111, Failed: 12, Value: 2000, Late: 3,
						Worst:   metrics.WindowSpan{From: 51 * s, To: 61 * s},
						Failing: []metrics.WindowSpan{{From: 51 * s, To: 71 * s}, {From: 100 * s, To: 110 * s}},
					}},
				}},
		},
	}
}

func TestWindowedThresholdLines(t *testing.T) {
	in := windowedInput()
	in.Options.NoColor = true
	text := Text(in)
	lineWith(t, text, "    ✓ 'p(99)<500' p(99)=") // the whole-run one, as before
	lineWith(t, text, "    ✗ 'p(99)<500' p(99)=2s in the worst 10s window (51s–1m1s); 12 of 111 10s windows failed: 51s–1m11s, 1m40s–1m50s (3 samples came too late for their windows)")
	lineWith(t, text, "    ✓ 'rate>50' rate=98.5/s in the worst 1m0s window (12s–1m12s); all 61 1m0s windows passed")
}

func TestWindowedThresholdData(t *testing.T) {
	in := windowedInput()
	data := Data(in)
	// k6's shape under metrics: {source: {ok}}.
	th := data["metrics"].(map[string]any)["http_req_duration"].(map[string]any)["thresholds"].(map[string]any)
	if len(th) != 1 || th["p(99)<500"].(map[string]any)["ok"] != false {
		t.Errorf("metrics.http_req_duration.thresholds = %v", th)
	}
	ws := data["metronome"].(map[string]any)["windows"].([]any)
	if len(ws) != 2 {
		t.Fatalf("metronome.windows has %d entries, want 2", len(ws))
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ws[1]); err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(b.String())
	want := `{"failed":12,"failing":[{"fromMs":51000,"toMs":71000},{"fromMs":100000,"toMs":110000}],"judged":111,"late":3,"metric":"http_req_duration","ok":false,"threshold":"p(99)<500","windowMs":10000,"worst":{"fromMs":51000,"toMs":61000,"value":2000}}`
	if got != want {
		t.Errorf("metronome.windows[1] =\n%s\nwant\n%s", got, want)
	}
	exp, err := ExportJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(exp), `"p(99)<500": true`) {
		t.Errorf("--summary-export does not mark the failed threshold k6's way:\n%s", exp)
	}
}
