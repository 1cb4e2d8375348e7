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

// writeHalf writes the result file of one instance: segment seg of
// halves, n iterations.
func writeHalf(t *testing.T, path, seg string, n int) {
	t.Helper()
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	opts := `{"scenarios":{"s":{"executor":"shared-iterations","vus":1,"iterations":20}},` +
		`"executionSegment":"` + seg + `","executionSegmentSequence":"0,1/2,1"}`
	o, err := New(output.Params{Arg: path, Registry: reg, Options: json.RawMessage(opts), Script: "t.js"})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	tags := metrics.EmptyTags.With("scenario", "s")
	var batch []metrics.Sample
	for range n {
		batch = append(batch, metrics.Sample{Metric: b.Iterations, Tags: tags, Time: time.Now(), Value: 1})
	}
	o.AddSamples(batch)
	o.(output.EndReceiver).ReceiveEnd(output.RunEnd{Elapsed: time.Second})
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
}

// While a merge waits, each look at a result file takes only what was
// appended since the last (bytes already read may change under it
// unnoticed) and keeps no numbers; once the files are complete, the merge
// reads each one again, as far as the looks saw it, for its numbers.
func TestFollowerLooksThenReads(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.result"), filepath.Join(dir, "b.result")
	writeHalf(t, a, "0:1/2", 5)
	whole := filepath.Join(t.TempDir(), "b.result")
	writeHalf(t, whole, "1/2:1", 7)
	content, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	// b's runner has written its header and part of a line.
	half := bytes.IndexByte(content, '\n') + 10
	if err := os.WriteFile(b, content[:half], 0o644); err != nil {
		t.Fatal(err)
	}
	fw := NewFollower([]string{dir})
	files, err := fw.look()
	if err != nil || len(files) != 2 || files[1].End != nil || !strings.Contains(files[1].Truncated, "is cut short") {
		t.Fatalf("first look: %v, %+v", err, files)
	}
	f, err := os.OpenFile(b, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{'#'}, half), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(content[half:], int64(half)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if files, err = fw.look(); err != nil || files[1].End == nil {
		t.Fatalf("second look: %v, %+v", err, files)
	}
	// b's runner begins it anew (another file at the path): the new file
	// is looked at whole.
	if err := os.WriteFile(b+".new", content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b+".new", b); err != nil {
		t.Fatal(err)
	}
	if files, err = fw.look(); err != nil || files[1].End == nil {
		t.Fatalf("look at b begun anew: %v, %+v", err, files)
	}
	if files, err = fw.finish("it was read", false); err != nil {
		t.Fatal(err)
	}
	var iterations int64
	for _, f := range files {
		if f.Series != nil {
			t.Errorf("the look at %s kept %d totals", f.Name, len(f.Series))
		}
		rc, err := fw.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		numbers, err := Read(rc, f.Name)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range numbers.Series {
			if c, ok := s.Sink.(*metrics.CounterSink); ok && s.Metric.Name == metrics.IterationsName {
				iterations += c.Count
			}
		}
	}
	if iterations != 12 {
		t.Errorf("the files hold %d iterations, want 5 + 7", iterations)
	}
}
