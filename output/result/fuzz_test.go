package result

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// FuzzRead asserts that reading an untrusted result file (one that comes
// from another machine) never panics and always terminates, and that what
// it accepts is a file its other readers take too: the totals' sinks can
// be read, a second read gives the same totals, and Union checks it. The
// line limit keeps memory bounded (TestLongLineIsRefused); the seeds are
// files the output wrote, and the forged and truncated ones of the other
// tests.
func FuzzRead(f *testing.F) {
	for _, batches := range []int{1, 3} {
		b := written(f, batches)
		if file, err := Read(bytes.NewReader(b), "seed.result"); err != nil || len(file.Series) == 0 {
			f.Fatalf("the seed is not read whole: %v", err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(minimalHeader))
	f.Add([]byte(minimalHeader + `{"metric":{"name":"x","type":"trend","contains":"time"}}` + "\n" +
		`{"series":{"id":0,"metric":"x","tags":{"a":"b"}}}` + "\n" +
		`{"interval":{"start":1700000000000000000,"end":1700000001000000000,"entries":[{"id":0,"n":1,"sum":1,"min":1,"max":1}]}}` + "\n"))
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		file, err := Read(bytes.NewReader(in), "fuzz.result")
		if err != nil {
			if file != nil {
				t.Fatalf("Read returned a file with its error %v", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "fuzz.result") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		if file.Truncated != "" && file.End != nil {
			t.Fatalf("a file both truncated (%s) and ended", file.Truncated)
		}
		for _, s := range file.Series {
			describeSink(s.Sink)
		}
		again, err := Read(bytes.NewReader(in), "fuzz.result")
		if err != nil || len(again.Series) != len(file.Series) || again.Intervals != file.Intervals {
			t.Fatalf("a second read differs: %v", err)
		}
		_, _ = Union([]*File{file})
	})
}

// written is a file the output wrote of batches of httpSamples, in real
// time: a fuzz target's seeds cannot be made in a synctest bubble.
func written(tb testing.TB, batches int) []byte {
	tb.Helper()
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	o, err := New(output.Params{Arg: filepath.Join(tb.TempDir(), "seed.result"), Registry: reg, Logf: func(string, ...any) {},
		Options: json.RawMessage(testOptions), Script: "no-such-script.js", Version: "test"})
	if err != nil {
		tb.Fatal(err)
	}
	if err := o.Start(); err != nil {
		tb.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range batches {
		o.AddSamples(httpSamples(reg, b, at.Add(time.Duration(i)*100*time.Millisecond), i))
	}
	o.(output.EndReceiver).ReceiveEnd(output.RunEnd{})
	if err := o.Stop(); err != nil {
		tb.Fatal(err)
	}
	out, err := os.ReadFile(o.(*Output).Path())
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// describeSink reads of a sink what the summary reads.
func describeSink(s metrics.Sink) {
	_ = s.IsEmpty()
	if tr, ok := s.(*metrics.TrendSink); ok {
		for _, p := range []float64{0, 50, 99.9, 100} {
			_ = tr.Percentile(p)
		}
		_ = tr.Avg()
	}
}
