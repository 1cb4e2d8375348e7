package hdrlog

import (
	"errors"
	"io"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/internal/percentiles"
)

// FuzzLogReader asserts that reading an untrusted interval log never
// panics and always terminates, as hdrhistogram-go's FuzzLogReader does
// for its own reader, and that what it reads merges and summarizes as
// `metronome merge` does. Memory stays bounded by the line and payload
// limits and the sparse decoding (TestWideHistogramsCostTheirBytes). The
// seeds are logs of metronome's geometry, a histogram of another, and
// the damaged lines TestMalformedLinesAreReported skips.
func FuzzLogReader(f *testing.F) {
	f.Add(strings.Join(goodLog(f, 3), ""))
	f.Add(strings.Join(goodLog(f, 2), "")[:400])
	f.Add("#[BaseTime: 1700000000.000 (seconds since epoch)]\n" + intervalLine(f, "", 1, 2, 1, 1, 2) +
		intervalLine(f, "metric=x;name=a%3Bb", 1000, 1<<40, 5, 1, 1<<39))
	f.Add("#[StartTime: x]\nTag=a\n1,2,3\n-1,1,0,HISTFAAAAB\n1,1,1,not base64\n\"legend\"\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		lr := NewLogReader(strings.NewReader(in), "fuzz.hlog")
		n := 0
		for {
			iv, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("a string reader failed: %v", err)
			}
			if iv.End.Before(iv.Start) {
				t.Fatalf("an interval ends (%v) before it starts (%v)", iv.End, iv.Start)
			}
			n++
		}
		if lr.Skipped() > 0 && len(lr.Warnings()) == 0 {
			t.Fatalf("%d lines skipped without a warning", lr.Skipped())
		}
		m := NewMerger()
		err := m.Add(strings.NewReader(in), "fuzz.hlog")
		if (err == nil) != (n > 0) {
			t.Fatalf("%d intervals, and Merger.Add says %v", n, err)
		}
		for _, d := range m.Distributions() {
			summary(t, d.Hist, d.Summarize(percentiles.Table))
		}
		for _, e := range m.Endpoints() {
			_ = e.Summarize(percentiles.ByName)
		}
	})
}

// summary checks that a distribution's summary orders its numbers.
func summary(t *testing.T, h *hdrhistogram.PackedHistogram, s percentiles.Summary) {
	t.Helper()
	if s.Count != h.TotalCount() {
		t.Fatalf("summary counts %d of %d", s.Count, h.TotalCount())
	}
	if s.Count > 0 && (s.Min > s.Max || s.Percentiles["p50"] < s.Min || s.Percentiles["p50"] > s.Max) {
		t.Fatalf("min %v, p50 %v, max %v", s.Min, s.Percentiles["p50"], s.Max)
	}
}
