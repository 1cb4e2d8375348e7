package dashboard

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/summary"
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

// The two kinds of band share the charts of the whole test: one shading
// each, in its own colour, each named in the legend, and the caption
// says which is which; a scenario's charts have only the generator's,
// since windowed thresholds judge the whole test.
func TestBandsTellApart(t *testing.T) {
	f := newFixture()
	for s := range 5 {
		f.samples = append(f.samples, metrics.Sample{Metric: f.b.GeneratorLimited, Tags: metrics.EmptyTags,
			Time: t0.Add(time.Duration(s+1) * time.Second), Value: float64(s % 2)})
	}
	tl := f.timeline(t)
	in := &summary.Input{State: summary.State{Start: tl.Start},
		Metrics: []summary.Metric{{Name: "corrected_latency", Thresholds: []summary.Threshold{
			{Source: "p(99)<100", Window: time.Second, Windows: summary.WindowVerdict{Judged: 5, Failed: 1,
				Failing: []metrics.WindowSpan{{From: 2 * time.Second, To: 3 * time.Second}}}},
		}}},
	}
	p, err := BuildPage(tl, in, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	// gonum writes each shading's translucent fill colour as it blends
	// it; the shadings are told apart by their colours' counts.
	fills := regexp.MustCompile(`fill:(#[0-9A-F]{6});fill-opacity:`)
	for _, sec := range p.Sections {
		for _, c := range sec.Charts {
			if strings.HasSuffix(c.ID, "-spectrum") {
				continue
			}
			var bands []string
			for _, l := range c.Legend {
				if l.Band {
					bands = append(bands, l.Name)
				}
			}
			perColor := map[string]int{}
			for _, m := range fills.FindAllStringSubmatch(c.SVG, -1) {
				perColor[m[1]]++
			}
			var counts []int
			for _, n := range perColor {
				counts = append(counts, n)
			}
			slices.Sort(counts)
			want, wantCounts := []string{generatorLimited}, []int{2}
			if sec.Name == "" {
				want, wantCounts = []string{generatorLimited, failingWindows}, []int{1, 2}
			}
			if !slices.Equal(counts, wantCounts) || !slices.Equal(bands, want) {
				t.Errorf("%s: shaded spans per colour %v, legend bands %q; want %v and %q", c.ID, perColor, bands, wantCounts, want)
			}
			if !strings.Contains(c.Caption, "generator_limited") {
				t.Errorf("%s: the caption does not say what the generator's band is: %q", c.ID, c.Caption)
			}
		}
	}
}
