package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// generator_limited samples, one per health interval at its end, become
// the spans the charts shade: adjacent limited intervals join, a healthy
// one ends a span, and the first interval starts a period before its end.
func TestInflatedSpans(t *testing.T) {
	f := newFixture()
	limited := []float64{1, 1, 0, 0, 1}
	for s, v := range limited {
		f.samples = append(f.samples, metrics.Sample{Metric: f.b.GeneratorLimited, Tags: metrics.EmptyTags,
			Time: t0.Add(time.Duration(s+1) * time.Second), Value: v})
	}
	tl := f.timeline(t)
	want := []Span{{t0, t0.Add(2 * time.Second)}, {t0.Add(4 * time.Second), t0.Add(5 * time.Second)}}
	if len(tl.Inflated) != len(want) || tl.Inflated[0] != want[0] || tl.Inflated[1] != want[1] {
		t.Fatalf("inflated spans %v, want %v", tl.Inflated, want)
	}
	if got := inflatedMarks(tl); len(got) != 2 || got[0] != (Mark{0, 2}) || got[1] != (Mark{4, 5}) {
		t.Errorf("marks %v", got)
	}
	charts, err := Charts(tl)
	if err != nil {
		t.Fatal(err)
	}
	// Every chart over time, of every section, shades them and says so;
	// the spectrum has no time axis and does not. The only translucent
	// fills are the shading's.
	for _, c := range charts {
		shaded := strings.Count(c.SVG, ";fill-opacity:")
		legend := len(c.Legend) > 0 && c.Legend[len(c.Legend)-1].Name == generatorLimited && c.Legend[len(c.Legend)-1].Band
		if strings.HasSuffix(c.ID, "-spectrum") {
			if shaded != 0 || legend {
				t.Errorf("%s: shaded %d spans", c.ID, shaded)
			}
			continue
		}
		if shaded != 2 || !legend || !strings.Contains(c.Caption, "generator_limited") {
			t.Errorf("%s: %d shaded spans, legend %v, caption %q; want 2, a band entry and the caption", c.ID, shaded, legend, c.Caption)
		}
	}
	p, err := BuildPage(tl, nil, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	html, err := p.Render()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `<i class="band" style="background: `+Palette[generatorLimited]+`"></i>`+generatorLimited) {
		t.Error("the page's legends do not show the band")
	}
}
