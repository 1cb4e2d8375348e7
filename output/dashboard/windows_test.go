package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/summary"
)

// The report shades where a windowed threshold failed on the time charts
// of the whole test, placed by the run's start against the dashboard's,
// and its thresholds table says which windows failed.
func TestReportMarksFailingWindows(t *testing.T) {
	tl := newFixture().timeline(t)
	s := time.Second
	in := &summary.Input{
		State: summary.State{Start: tl.Start.Add(500 * time.Millisecond)},
		Metrics: []summary.Metric{{Name: "http_req_duration", Thresholds: []summary.Threshold{
			{Source: "p(99)<500", OK: true},
			{Source: "p(99)<500", OK: false, Window: 2 * s, Windows: summary.WindowVerdict{
				Judged: 9, Failed: 3, Failing: []metrics.WindowSpan{{From: 2 * s, To: 5 * s}}}},
		}}},
	}
	if got, want := MarksOf(tl, in), []Mark{{From: 2.5, To: 5.5}}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("marks %v, want %v", got, want)
	}
	p, err := BuildPage(tl, in, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	// The only translucent fill of a chart is the shading.
	const fill = ";fill-opacity:"
	for _, sec := range p.Sections {
		for _, c := range sec.Charts {
			want := 0
			if sec.Name == "" && !strings.HasSuffix(c.ID, "-spectrum") {
				want = 1
			}
			if n := strings.Count(c.SVG, fill); n != want {
				t.Errorf("%s: %d shaded stretches, want %d", c.ID, n, want)
			}
			if shaded := c.Legend[len(c.Legend)-1].Name == failingWindows; shaded != (want == 1) {
				t.Errorf("%s: the legend's last entry is %q", c.ID, c.Legend[len(c.Legend)-1].Name)
			}
		}
	}
	b, err := p.Render()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `<td class="fail">failed: 3 of 9 2s windows failed: 2s–5s</td>`) {
		t.Errorf("the thresholds table does not name the failing windows")
	}
}
