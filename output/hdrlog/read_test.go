package hdrlog

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/internal/percentiles"
)

// intervalLine is one log line of a histogram of lowest..highest at digits
// significant digits holding values (each once), tagged tag.
func intervalLine(t testing.TB, tag string, lowest, highest int64, digits int, values ...int64) string {
	t.Helper()
	h := hdrhistogram.NewPacked(lowest, highest, digits)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return line(t, tag, h)
}

// line is the log line of h, tagged tag.
func line(t testing.TB, tag string, h *hdrhistogram.PackedHistogram) string {
	t.Helper()
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("Tag=%s,1700000000.000,1.000,0.001,%s\n", tag, enc)
}

// goodLog is a log of n one-second intervals of metric m, each holding the
// values 1..10 ms, in metronome's geometry.
func goodLog(t testing.TB, n int) []string {
	lines := []string{"#[Histogram log format version 1.3]\n", "#[StartTime: 1700000000.000 (seconds since epoch), …]\n",
		`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"` + "\n"}
	for range n {
		lines = append(lines, intervalLine(t, Series{Metric: "m", Scenario: "s"}.Tag(), Lowest, Highest, SignificantDigits,
			1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000))
	}
	return lines
}

// merge reads the logs into a Merger and returns it and its count of m.
func mergeText(t *testing.T, logs ...string) (*Merger, int64) {
	t.Helper()
	m := NewMerger()
	for i, l := range logs {
		if err := m.Add(strings.NewReader(l), fmt.Sprintf("log%d.hlog", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	for _, d := range m.Distributions("m") {
		n += d.Summarize(percentiles.Table).Count
	}
	return m, n
}

// A line that is not an interval histogram is skipped with a warning that
// names the file and the line, and the other lines still count. Before,
// merge and report skipped such a line in silence (the probe's count 119
// instead of 138, exit 0).
func TestMalformedLinesAreReported(t *testing.T) {
	lines := goodLog(t, 30)
	good := strings.Join(lines, "")
	bad := map[int]string{ // line number (1-based) → how it is spoilt, and the warning
		10: strings.Replace(lines[9], ",", ";", 1),
		12: strings.Replace(lines[11], ",1.000,", ",-5,", 1),
		14: strings.Replace(lines[13], "HIST", "HIS!", 1),
		16: "Tag=m\n",
		18: strings.Replace(lines[17], "1700000000.000", "soon", 1),
	}
	want := map[int]string{
		10: "log1.hlog:10: not an interval histogram (want [Tag=…,]start,length,max,histogram); the line was skipped",
		12: "log1.hlog:12: start 1700000000.000 and length -5 must be finite and not negative; the line was skipped",
		14: "log1.hlog:14: the histogram cannot be read: illegal base64 data",
		16: "log1.hlog:16: a Tag= line without an interval; the line was skipped",
		18: `log1.hlog:18: start, length and max must be numbers, not "soon", "1.000" and "0.001"; the line was skipped`,
	}
	spoilt := append([]string(nil), lines...)
	for n, l := range bad {
		spoilt[n-1] = l
	}
	_, whole := mergeText(t, good)
	m, got := mergeText(t, strings.Join(spoilt, ""))
	if whole != 300 || got != 300-10*int64(len(bad)) {
		t.Errorf("counts %d and %d, want 300 and %d", whole, got, 300-10*len(bad))
	}
	warnings := strings.Join(m.Warnings(), "\n")
	for _, w := range want {
		if !strings.Contains(warnings, w) {
			t.Errorf("no warning %q in\n%s", w, warnings)
		}
	}

	// Past the first few, skipped lines are counted.
	for n := 20; n <= 25; n++ {
		spoilt[n-1] = "garbage\n"
	}
	m, _ = mergeText(t, strings.Join(spoilt, ""))
	if w := m.Warnings(); len(w) != maxReported+1 || w[maxReported] != "log1.hlog: 6 more lines that are not interval histograms were skipped" {
		t.Errorf("warnings:\n%s", strings.Join(w, "\n"))
	}
}

// A line longer than MaxLineBytes and a histogram that inflates past
// MaxPayloadBytes are skipped, and reading goes on after them.
func TestLineAndPayloadLimits(t *testing.T) {
	lines := goodLog(t, 2)
	long := "Tag=m," + strings.Repeat("1", MaxLineBytes) + "\n"
	// 200,000 values with large counts: a payload of 1.2 MB that zlib
	// squeezes into a few KB.
	h := hdrhistogram.NewPacked(1, 1<<40, 5)
	for v := int64(1); v <= 200_000; v++ {
		if err := h.RecordValues(v, 1<<44); err != nil {
			t.Fatal(err)
		}
	}
	huge := line(t, Series{Metric: "m", Scenario: "s"}.Tag(), h)
	if len(huge) > 64<<10 {
		t.Fatalf("the bomb line is %d bytes", len(huge))
	}
	m, n := mergeText(t, lines[3]+long+huge+lines[4])
	w := strings.Join(m.Warnings(), "\n")
	if n != 20 || !strings.Contains(w, "log1.hlog:2: a line longer than 4 MiB; the line was skipped") ||
		!strings.Contains(w, "log1.hlog:3: the histogram cannot be read: it inflates to") {
		t.Errorf("count %d (want 20), warnings:\n%s", n, w)
	}
}

// A log of a hundred ~100-byte lines, each declaring the range 1..MaxInt64
// at 5 significant digits (6.2 million buckets, 49 MB decoded densely),
// costs memory in proportion to its bytes. Before, merging the probe's
// 10.7 KB log took 2.3 GB.
func TestWideHistogramsCostTheirBytes(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		b.WriteString(intervalLine(t, fmt.Sprintf("metric=m%d;scenario=s", i), 1, math.MaxInt64, 5, 1000, 1_000_000, 1<<50))
	}
	if b.Len() > 20_000 {
		t.Fatalf("the log is %d bytes, want a small one", b.Len())
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := NewMerger()
	if err := m.Add(strings.NewReader(b.String()), "wide.hlog"); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("merging a %d-byte log allocated %d MB", b.Len(), alloc>>20)
	}
	ds := m.Distributions()
	if len(ds) != 100 {
		t.Fatalf("%d distributions", len(ds))
	}
	s := ds[0].Summarize([]float64{50})
	if s.Count != 3 || s.Max < 1.1e12*0.999 || s.Min != 1 {
		t.Errorf("summary %+v: want 3 values, 1 ms to 2^50 µs", s)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if live := int64(after.HeapAlloc) - int64(before.HeapAlloc); live > 16<<20 {
		t.Errorf("the merged distributions hold %d MB", live>>20)
	}
	runtime.KeepAlive(m)
}

// Times are read as hdrhistogram's own reader reads them.
func TestLogReaderTimes(t *testing.T) {
	var buf bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&buf)
	_ = w.OutputStartTime(1_700_000_000_000)
	_ = w.OutputBaseTime(1_700_000_000_000)
	h := hdrhistogram.New(Lowest, Highest, SignificantDigits)
	_ = h.RecordValue(5)
	h.SetStartTimeMs(1_700_000_002_000)
	h.SetEndTimeMs(1_700_000_003_500)
	if err := w.OutputIntervalHistogram(h); err != nil {
		t.Fatal(err)
	}
	theirs, err := hdrhistogram.NewHistogramLogReader(bytes.NewReader(buf.Bytes())).NextIntervalHistogram()
	if err != nil {
		t.Fatal(err)
	}
	iv, err := NewLogReader(bytes.NewReader(buf.Bytes()), "x").Next()
	if err != nil {
		t.Fatal(err)
	}
	if iv.Start.UnixMilli() != theirs.StartTimeMs() || iv.End.UnixMilli() != theirs.EndTimeMs() || iv.Hist.TotalCount() != 1 {
		t.Errorf("interval %v..%v (%d values), hdrhistogram reads %d..%d", iv.Start.UnixMilli(), iv.End.UnixMilli(), iv.Hist.TotalCount(),
			theirs.StartTimeMs(), theirs.EndTimeMs())
	}
	if _, err := NewLogReader(strings.NewReader(""), "x").Next(); err != io.EOF {
		t.Errorf("an empty log: %v, want io.EOF", err)
	}
}
