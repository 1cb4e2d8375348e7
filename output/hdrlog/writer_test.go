package hdrlog

import (
	"bytes"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/logtest"
	"github.com/metronome-load/metronome/metrics"
)

// A Writer given ten minutes of samples in time order writes each interval
// once it is a grace old, so it holds a few intervals at a time however
// long the run; the log it writes merges back to exactly what it was
// given, per series.
func TestWriterWritesAsItGoes(t *testing.T) {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var log bytes.Buffer
	var l logtest.Lines
	w, err := NewWriter(&log, start, nil, l.Logf)
	if err != nil {
		t.Fatal(err)
	}
	login := metrics.NewTags(map[string]string{"scenario": "api", "name": "login"})
	home := metrics.NewTags(map[string]string{"scenario": "api", "name": "home"})
	const seconds, perSecond = 600, 100
	maxOpen := 0
	for s := range seconds {
		batch := make([]metrics.Sample, 0, perSecond)
		for k := range perSecond {
			at := start.Add(time.Duration(s)*time.Second + time.Duration(k)*10*time.Millisecond)
			tags := login
			if k%4 == 0 {
				tags = home
			}
			batch = append(batch, metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: float64(1 + k)})
		}
		w.Add(batch)
		maxOpen = max(maxOpen, len(w.o.open))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The grace is 2 s, so the intervals of the last 2–3 s stay open.
	if maxOpen > 4 {
		t.Errorf("up to %d intervals open at once, want at most 4 (the grace, 2 s, and the current one)", maxOpen)
	}
	m := NewMerger()
	if err := m.Add(bytes.NewReader(log.Bytes()), "written"); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"login": seconds * perSecond * 3 / 4, "home": seconds * perSecond / 4}
	eps := m.Endpoints()
	if len(eps) != 2 {
		t.Fatalf("%d names in the log, want 2", len(eps))
	}
	for _, e := range eps {
		if got := e.Corrected.Hist.TotalCount(); got != want[e.Name] || e.Corrected.Intervals != seconds {
			t.Errorf("%s: %d values in %d intervals, want %d in %d", e.Name, got, e.Corrected.Intervals, want[e.Name], seconds)
		}
	}
	if d := m.Distributions(); len(d) != 1 || !d[0].Start.Equal(start) || !d[0].End.Equal(start.Add(seconds*time.Second)) {
		t.Errorf("%d distributions, the first from %v to %v; want one from %v to %v", len(d), d[0].Start, d[0].End, start, start.Add(seconds*time.Second))
	}
}
