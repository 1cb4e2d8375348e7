package tool

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/metrics"
)

// audit's --threshold takes merge's and watch's form; the form it took
// before, METRIC=EXPRESSION, still works for one release, with a warning.
func TestAuditThresholdForms(t *testing.T) {
	var stderr bytes.Buffer
	c := &Audit{Stderr: &stderr, Thresholds: []string{
		"corrected_latency: p(99)<250",
		"corrected_latency=p(95)<100",
		"http_req_duration{name:login}: p(90)<50",
		"http_req_duration{name:login}=max<900",
		"checks=rate==1",
	}}
	got, err := ParseThresholds(c.legacyThresholds())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]metrics.ThresholdDef{
		"corrected_latency":             {{Source: "p(99)<250"}, {Source: "p(95)<100"}},
		"http_req_duration{name:login}": {{Source: "p(90)<50"}, {Source: "max<900"}},
		"checks":                        {{Source: "rate==1"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("thresholds %v, want %v", got, want)
	}
	warnings := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(warnings) != 3 || !strings.Contains(warnings[0], `--threshold "corrected_latency=p(95)<100": METRIC=EXPRESSION is deprecated`) ||
		!strings.Contains(warnings[0], `write "corrected_latency: p(95)<100"`) {
		t.Errorf("warnings, want one per old-form value:\n%s", stderr.String())
	}

	// A malformed value is refused in the shared form's words.
	c = &Audit{Stderr: &stderr, Thresholds: []string{"corrected_latency"}}
	if _, err := ParseThresholds(c.legacyThresholds()); exitcode.Of(err) != exitcode.InvalidConfig ||
		!strings.Contains(err.Error(), "write it as METRIC[{tag:value}]: EXPRESSION") {
		t.Errorf("malformed: %v", err)
	}
}
