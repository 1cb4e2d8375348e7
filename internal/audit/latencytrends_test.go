package audit

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/metrics"
)

// opsOutput is k6's output of a run whose requests are operations a
// script times itself with the custom Trend op_duration (a Redis call,
// say): no k6/http sample at all.
func opsOutput(meta bool) *k6Output {
	o := newK6Output(meta)
	o.op = "op_duration"
	return o
}

// auditTrends audits out with the options and latency trends.
func auditTrends(t *testing.T, out *k6Output, options string, trends ...string) audited {
	t.Helper()
	return auditWith(t, out.b.Bytes(), Options{Scenarios: scenarios(t, options), Log: true, LatencyTrends: trends})
}

// A stock k6 run whose operations are timed by a custom Trend, audited
// with that trend among latencyTrends, is charged exactly as the same run
// of k6/http requests: every operation its own time plus its arrival's
// lag, tagged metric=op_duration, the drops as before. Without the
// option, only the drops are charged: the audit cannot see the
// operations.
func TestAuditChargesLatencyTrends(t *testing.T) {
	for _, meta := range []bool{true, false} {
		late := map[int]float64{200: 2}
		ref := audit(t, frozenOpenN(meta, late, 450), openOptions)
		res := auditTrends(t, frozenOpenInto(opsOutput(meta), late, 450), openOptions, "op_duration")
		want := values(ref, metrics.CorrectedLatencyName, nil)
		if got := values(res, metrics.CorrectedLatencyName, nil); !sameValues(got, want) {
			t.Errorf("meta %v: corrected_latency %v,\nthe same run of HTTP requests %v", meta, got, want)
		}
		ops := values(res, metrics.CorrectedLatencyName, map[string]string{"metric": "op_duration", "op": "GET", "scenario": "open"})
		if len(ops) != 410 || slices.Max(ops) < 500 {
			t.Errorf("meta %v: %d corrected_latency values tagged metric=op_duration, max %v; want 410, the frozen one over 500 ms", meta, len(ops), slices.Max(ops))
		}
		if n := len(values(res, metrics.CorrectedLatencyName, map[string]string{"outcome": "dropped"})); n != 40 {
			t.Errorf("meta %v: %d drops charged, want 40", meta, n)
		}
		if sc := res.Scenarios[0]; sc.Requests != 410 {
			t.Errorf("meta %v: %d requests, want the 410 operations", meta, sc.Requests)
		}
		without := auditTrends(t, frozenOpenInto(opsOutput(meta), late, 450), openOptions)
		if n := len(values(without, metrics.CorrectedLatencyName, nil)); n != 40 {
			t.Errorf("meta %v: without latencyTrends %d corrected_latency values, want the 40 drops", meta, n)
		}
	}
}

// A closed-model run is back-filled per operation as per request: the
// same 39 samples for the 510 ms operation, and the summary shows
// corrected_latency{metric:op_duration} under corrected_latency.
func TestAuditBackFillsLatencyTrends(t *testing.T) {
	const options = `{"scenarios":{"closed":{"executor":"constant-vus","vus":1,"duration":"5625ms","expectedInterval":"12.5ms"}}}`
	res := auditTrends(t, frozenClosedInto(opsOutput(true)), options, "op_duration")
	filled := values(res, metrics.CorrectedLatencyName, map[string]string{"backfilled": "true", "metric": "op_duration"})
	ops := values(res, metrics.CorrectedLatencyName, map[string]string{"metric": "op_duration"})
	if len(filled) != 39 || len(ops) != 449 || slices.Max(filled) != 497.5 || slices.Min(filled) != 22.5 {
		t.Fatalf("%d back-filled of %d corrected_latency values tagged metric=op_duration, %v to %v; want 39 of 449, 22.5 to 497.5",
			len(filled), len(ops), slices.Min(filled), slices.Max(filled))
	}
	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	// Every corrected sample is the trend's: the submetric's line reads as
	// corrected_latency's.
	stats := func(line string) string { _, after, _ := strings.Cut(line, ": "); return after }
	sub, all := lineOf(text.String(), "{ metric:op_duration }"), lineOf(text.String(), "corrected_latency...")
	if sub == "" || stats(sub) != stats(all) || !strings.Contains(sub, "max=510ms") {
		t.Errorf("the summary's { metric:op_duration } line %q, want corrected_latency's figures %q:\n%s", sub, all, text.String())
	}
}

// lineOf returns the first line of text holding s.
func lineOf(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// A latency trend the output declares as anything but a Trend of time is
// refused, with the option path.
func TestAuditRefusesNonTimeLatencyTrend(t *testing.T) {
	o := newK6Output(true)
	o.op = "op_size"
	frozenOpenInto(o, nil, 450)
	_, err := Audit(bytes.NewReader(o.b.Bytes()), "out.json", Options{Scenarios: scenarios(t, openOptions), LatencyTrends: []string{"op_size"}})
	if want := `options.latencyTrends[0]: out.json declares "op_size" a trend of default values, not a Trend of time`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
