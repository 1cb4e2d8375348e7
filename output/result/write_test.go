package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// oddFloats are the values a num field must write as json.Marshal does.
var oddFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e21, 1e-7, 123456789.123, math.MaxFloat64,
	math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, -2.5e-300}

// checkEntry checks appendEntry against json.Marshal for e.
func checkEntry(t *testing.T, e entry) {
	t.Helper()
	want, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendEntry([]byte("x"), &e); string(got) != "x"+string(want) {
		t.Fatalf("entry %+v\nwritten %s\njson    %s", e, got[1:], want)
	}
}

// An entry is written byte for byte as json.Marshal writes it: fields
// left out where omitempty leaves them out, numbers in num's form.
func TestEntryIsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pick := func() float64 {
		if rng.IntN(3) == 0 {
			return rng.NormFloat64() * math.Pow10(rng.IntN(40)-20)
		}
		return oddFloats[rng.IntN(len(oddFloats))]
	}
	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 1_700_000_000_123_456_789}
	hists := []string{"", "HISTFAAAACl4nJNpmSzMwMDAwwABzFCaEUzOmgFhAQA2LgJM", "a+b/c="}
	for range 5000 {
		checkEntry(t, entry{Series: rng.IntN(20000), N: ints[rng.IntN(len(ints))],
			Sum: num(pick()), First: ints[rng.IntN(len(ints))], Value: num(pick()), Last: ints[rng.IntN(len(ints))],
			Min: num(pick()), Max: num(pick()), NonZero: ints[rng.IntN(len(ints))],
			Hist: hists[rng.IntN(len(hists))], Neg: hists[rng.IntN(len(hists))]})
	}
}

// FuzzEntry checks appendEntry against json.Marshal for any numbers.
func FuzzEntry(f *testing.F) {
	f.Add(int64(3), uint64(0), uint64(math.Float64bits(math.NaN())), int64(-5), uint64(math.Float64bits(1e21)))
	f.Fuzz(func(t *testing.T, n int64, a, b uint64, c int64, d uint64) {
		checkEntry(t, entry{Series: int(n & 0xffff), N: n, Sum: num(math.Float64frombits(a)), First: c,
			Value: num(math.Float64frombits(b)), Last: -c, Min: num(math.Float64frombits(d)), Max: num(math.Float64frombits(a ^ d)),
			NonZero: c ^ n, Hist: "AAAA"})
	})
}

// marshalled is what the output wrote of iv before it wrote lines
// itself: json.Marshal of the interval, each histogram encoded.
func marshalled(t *testing.T, o *Output, iv *interval, start, end int64) []byte {
	t.Helper()
	l := intervalLine{Start: start, End: end}
	for _, id := range iv.order {
		d := iv.deltas[id]
		e := entry{Series: id, N: d.n}
		switch o.metric[id].Type {
		case metrics.Counter:
			e.Sum, e.First = num(d.sum), d.first
		case metrics.Gauge:
			e.Value, e.Last, e.Min, e.Max = num(d.value), d.last, num(d.min), num(d.max)
		case metrics.Rate:
			e.NonZero = d.nonZero
		case metrics.Trend:
			e.Sum, e.Min, e.Max = num(d.sum), num(d.min), num(d.max)
			if d.pos.TotalCount() > 0 {
				e.Hist = string(o.enc.Append(nil, &d.pos))
			}
			if d.neg.TotalCount() > 0 {
				e.Neg = string(o.enc.Append(nil, &d.neg))
			}
		}
		l.Data = append(l.Data, e)
	}
	b, err := json.Marshal(line{Interval: &l})
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// An interval's line is what json.Marshal writes of it, the histograms
// those the encoder writes of the aggregated values, on fresh deltas and
// on those the previous interval left for reuse.
func TestIntervalLineIsJSON(t *testing.T) {
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	custom := reg.MustNew("signed", metrics.Trend, metrics.Default)
	o, err := New(output.Params{Arg: "unused.result", Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	oo := o.(*Output)
	var out bytes.Buffer
	oo.buf = bufio.NewWriter(&out)
	start := time.Unix(1_700_000_000, 0)
	oo.header.Started = start
	rng := rand.New(rand.NewPCG(7, 8))
	for iv := range 3 {
		at := start.Add(time.Duration(iv)*time.Second + 300*time.Millisecond)
		var samples []metrics.Sample
		for k := range 300 {
			tags := metrics.EmptyTags.With("url", fmt.Sprintf("/u/%d", (k+iv)%40))
			tt := at.Add(time.Duration(k) * time.Millisecond)
			v := oddFloats[(k+iv)%len(oddFloats)]
			samples = append(samples,
				metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: tt, Value: rng.ExpFloat64() * 30},
				metrics.Sample{Metric: custom, Tags: tags, Time: tt, Value: rng.NormFloat64() * 1e4},
				metrics.Sample{Metric: b.HTTPReqs, Tags: tags, Time: tt, Value: v},
				metrics.Sample{Metric: b.VUs, Tags: tags, Time: tt, Value: v},
				metrics.Sample{Metric: b.Checks, Tags: tags, Time: tt, Value: float64(k % 2)},
			)
		}
		oo.ingest(samples)
		if err := oo.buf.Flush(); err != nil {
			t.Fatal(err)
		}
		out.Reset() // the definitions of new series
		open := oo.open[int64(iv)]
		if len(oo.open) != 1 || open == nil {
			t.Fatalf("interval %d: open %v", iv, oo.open)
		}
		ms := start.UnixMilli() + int64(iv)*1000
		want := marshalled(t, oo, open, ms, ms+1000)
		deltas := len(open.order)
		oo.writeClosed(time.Time{})
		if err := oo.buf.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("interval %d: the line\n%.600s\nwant json.Marshal's\n%.600s", iv, out.Bytes(), want)
		}
		if len(oo.spare) != deltas {
			t.Fatalf("interval %d: %d deltas kept for the next interval, want its %d", iv, len(oo.spare), deltas)
		}
	}
}

// Every histogram a file holds decodes to exactly the values its series
// got in its interval, sparse, dense (past hdrhist.Dense values),
// compressed or stored, of either sign, interval after interval.
func TestHistogramsReadBack(t *testing.T) {
	counts := []int{1, 2, 7, 60, 400, 3000}
	gen := func(reg *metrics.Registry, b *metrics.Builtin, at time.Time, i int) []metrics.Sample {
		rng := rand.New(rand.NewPCG(uint64(i), 11))
		custom := reg.MustNew("signed", metrics.Trend, metrics.Default)
		var out []metrics.Sample
		for k, n := range counts {
			if (i+k)%4 == 0 {
				continue // a series without values in some intervals
			}
			tags := metrics.EmptyTags.With("url", fmt.Sprintf("/u/%d", k))
			for j := range n / 5 {
				out = append(out,
					metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: rng.ExpFloat64() * math.Pow10(k%4)},
					metrics.Sample{Metric: custom, Tags: tags, Time: at, Value: rng.NormFloat64() * float64(j+1)})
			}
			out = append(out, metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: float64(i)})
		}
		return out
	}
	r := record(t, nil, 40, gen, nil)
	// The histograms of each (interval, metric, url) from the samples.
	type key struct {
		iv          int64
		metric, url string
		neg         bool
	}
	want := map[key]*hdrhistogram.Histogram{}
	f := readFile(t, r.path)
	started := f.Header.Started
	for _, s := range r.samples {
		u, _ := s.Tags.Get("url")
		k := key{int64(s.Time.Sub(started) / time.Second), s.Metric.Name, u, s.Value < 0}
		if want[k] == nil {
			want[k] = hdrhistogram.New(1, metrics.TrendHighestUnit, metrics.TrendSignificantDigits)
		}
		_ = want[k].RecordValue(metrics.TrendUnits(math.Abs(s.Value)))
	}
	fh, err := os.Open(r.path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	seen := 0
	var dense, compressed bool
	if _, err := Scan(fh, r.path, func(d *Delta) {
		u, _ := d.Series.Tags.Get("url")
		iv := int64(d.Start.Sub(started) / time.Second)
		for _, h := range []struct {
			h   *hdrhistogram.PackedHistogram
			neg bool
		}{{d.Pos, false}, {d.Neg, true}} {
			k := key{iv, d.Series.Metric.Name, u, h.neg}
			w := want[k]
			if (h.h == nil) != (w == nil) {
				t.Fatalf("%+v: histogram %v, values %v", k, h.h != nil, w != nil)
			}
			if w == nil {
				continue
			}
			got := hdrhistogram.New(1, metrics.TrendHighestUnit, metrics.TrendSignificantDigits)
			h.h.MergeInto(got)
			if !got.Equals(w) {
				t.Fatalf("%+v: %d values read back, %d recorded, or in other buckets", k, got.TotalCount(), w.TotalCount())
			}
			seen++
			dense = dense || w.TotalCount() >= 2048
			compressed = compressed || h.h.Populated() > 200
		}
	}); err != nil {
		t.Fatal(err)
	}
	if seen != len(want) || !dense || !compressed {
		t.Errorf("%d histograms read back of %d recorded; a dense one %v, a compressed one %v", seen, len(want), dense, compressed)
	}
}

// checkSeriesLine checks appendSeriesLine against json.Marshal of the
// series' definition, its values redacted.
func checkSeriesLine(t *testing.T, id int, metric string, tags *metrics.TagSet) {
	t.Helper()
	redact := func(s string) string { return strings.ReplaceAll(s, "hunter2", "***") }
	def := seriesDef{ID: id, Metric: metric, Tags: tags.Map()}
	for k, v := range def.Tags {
		def.Tags[k] = redact(v)
	}
	want, err := json.Marshal(line{Series: &def})
	if err != nil {
		t.Fatal(err)
	}
	if got := appendSeriesLine([]byte("x"), id, metric, tags, redact); string(got) != "x"+string(want)+"\n" {
		t.Fatalf("series line\n%q\nwant json.Marshal's\n%q", got[1:], want)
	}
}

// A series' line is written byte for byte as json.Marshal writes it:
// tags in key order, strings escaped as encoding/json escapes them.
func TestSeriesLineIsJSON(t *testing.T) {
	odd := []string{"", "a", "x<y>&z", "quote\"back\\slash", "\x00\x01\x1f\x7f", "\b\f\n\r\t", "é日本", "\u2028\u2029",
		"bad\xffutf8\xc3", "\xed\xa0\x80", "pass=hunter2", "http://127.0.0.1:8080/item/7?q=a&b=<c>"}
	checkSeriesLine(t, 0, "http_req_duration", metrics.EmptyTags)
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 2000 {
		tags := metrics.EmptyTags
		for range rng.IntN(6) {
			tags = tags.With(odd[rng.IntN(len(odd))]+fmt.Sprint(rng.IntN(3)), odd[rng.IntN(len(odd))])
		}
		checkSeriesLine(t, i*7919, odd[rng.IntN(len(odd))], tags)
	}
}

// FuzzSeriesLine checks appendSeriesLine against json.Marshal for any
// names, keys and values.
func FuzzSeriesLine(f *testing.F) {
	f.Add("m", "k", "v", "k2", "v\u2028<\xff")
	f.Fuzz(func(t *testing.T, metric, k1, v1, k2, v2 string) {
		checkSeriesLine(t, len(metric), metric, metrics.EmptyTags.With(k1, v1).With(k2, v2))
	})
}
