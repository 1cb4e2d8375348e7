package file

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// lineEncoder writes "name value" lines after a "# header" line, buffering
// until Flush, and counts its calls.
type lineEncoder struct {
	w       io.Writer
	buf     []byte
	encodes int
	flushes int
}

func (e *lineEncoder) Begin(w io.Writer) error {
	e.w = w
	_, err := io.WriteString(w, "# header\n")
	return err
}

func (e *lineEncoder) Encode(batch []metrics.Sample) error {
	e.encodes++
	for _, s := range batch {
		if s.Metric == nil {
			continue
		}
		e.buf = append(e.buf, s.Metric.Name...)
		e.buf = append(e.buf, ' ')
		e.buf = strconv.AppendFloat(e.buf, s.Value, 'g', -1, 64)
		e.buf = append(e.buf, '\n')
	}
	return nil
}

func (e *lineEncoder) Flush() error {
	e.flushes++
	if len(e.buf) == 0 {
		return nil
	}
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}

func batch(m *metrics.Metric, values ...float64) []metrics.Sample {
	out := make([]metrics.Sample, len(values))
	for i, v := range values {
		out[i] = metrics.Sample{Metric: m, Value: v}
	}
	return out
}

// want is what lineEncoder writes for values of metric name.
func want(name string, values ...float64) string {
	var b strings.Builder
	b.WriteString("# header\n")
	for _, v := range values {
		fmt.Fprintf(&b, "%s %v\n", name, v)
	}
	return b.String()
}

func TestGzipRoundTrip(t *testing.T) {
	reg := metrics.NewRegistry()
	m := metrics.RegisterBuiltin(reg).Iterations
	path := filepath.Join(t.TempDir(), "out.txt.gz")
	w := New(Config{Name: path, Interval: time.Hour, Prefix: "test output"}, &lineEncoder{})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	w.Add(batch(m, 1, 2.5))
	w.Add(nil)
	w.Add([]metrics.Sample{{Value: 99}}) // no metric: skipped
	w.Add(batch(m, -3))
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("truncated gzip stream: %v", err)
	}
	if w := want(m.Name, 1, 2.5, -3); string(got) != w {
		t.Errorf("got %q, want %q", got, w)
	}
}

// Batches reach the file on each tick and at Stop, not before.
func TestIntervalFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		m := metrics.RegisterBuiltin(reg).VUs
		path := filepath.Join(t.TempDir(), "out.txt")
		const every = 5 * time.Second
		w := New(Config{Name: path, Interval: every, Prefix: "test output"}, &lineEncoder{})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		read := func() string {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
		w.Add(batch(m, 1))
		time.Sleep(every - time.Millisecond)
		synctest.Wait()
		if got, w := read(), want(m.Name); got != w {
			t.Errorf("before the first tick: %q, want only the header", got)
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if got, w := read(), want(m.Name, 1); got != w {
			t.Errorf("after the first tick: %q, want %q", got, w)
		}
		w.Add(batch(m, 2))
		time.Sleep(every / 2)
		synctest.Wait()
		if got, w := read(), want(m.Name, 1); got != w {
			t.Errorf("between ticks: %q, want %q", got, w)
		}
		if err := w.Stop(); err != nil {
			t.Fatal(err)
		}
		w.Add(batch(m, 3)) // after Stop: dropped
		if err := w.Stop(); err != nil {
			t.Errorf("second Stop: %v", err)
		}
		if got, w := read(), want(m.Name, 1, 2); got != w {
			t.Errorf("after Stop: %q, want %q", got, w)
		}
	})
}

// failWriter accepts ok writes, then fails every write.
type failWriter struct {
	ok     int
	writes int
}

var errDiskFull = errors.New("disk full")

func (f *failWriter) Write(p []byte) (int, error) {
	f.writes++
	if f.writes > f.ok {
		return 0, errDiskFull
	}
	return len(p), nil
}

// The first write error is kept, logged once and returned by Stop; later
// batches are not encoded.
func TestFirstError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewRegistry()
		m := metrics.RegisterBuiltin(reg).VUs
		dst := &failWriter{ok: 1} // the header
		enc := &lineEncoder{}
		var logs []string
		w := New(Config{
			Name: "-", Stdout: dst, Interval: time.Second, Prefix: "test output", Description: "test (stdout)",
			Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) },
		}, enc)
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		w.Add(batch(m, 1))
		time.Sleep(time.Second + time.Millisecond)
		synctest.Wait()
		encodes, writes := enc.encodes, dst.writes
		if encodes != 1 || writes != 2 {
			t.Fatalf("after the failing tick: %d encodes, %d writes; want 1, 2", encodes, writes)
		}
		w.Add(batch(m, 2))
		time.Sleep(time.Second)
		synctest.Wait()
		err := w.Stop()
		if enc.encodes != encodes || dst.writes != writes {
			t.Errorf("kept writing after the error: %d encodes, %d writes", enc.encodes, dst.writes)
		}
		// Batch 1 was encoded but its write failed; batch 2 never was.
		if !errors.Is(err, errDiskFull) || err.Error() != "test output: writing test (stdout): disk full; at least 2 samples were not written" {
			t.Errorf("Stop = %v", err)
		}
		if len(logs) != 1 || !strings.HasPrefix(logs[0], "test output: writing test (stdout): disk full;") {
			t.Errorf("logged %q, want the error once", logs)
		}
		if again := w.Stop(); again != err {
			t.Errorf("second Stop = %v, want %v", again, err)
		}
	})
}

func TestStartErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "out.txt")
	w := New(Config{Name: path, Interval: time.Second, Prefix: "test output"}, &lineEncoder{})
	err := w.Start()
	if err == nil || !strings.HasPrefix(err.Error(), "test output: cannot create "+path+": ") || strings.Count(err.Error(), path) != 1 {
		t.Errorf("Start = %v", err)
	}
	if err := w.Stop(); err != nil {
		t.Errorf("Stop after a failed Start: %v", err)
	}

	w = New(Config{Name: "-", Stdout: &failWriter{}, Interval: time.Second, Prefix: "test output"}, &lineEncoder{})
	if err := w.Start(); !errors.Is(err, errDiskFull) || !strings.HasPrefix(err.Error(), "test output: writing the header of -: ") {
		t.Errorf("Start with a failing header = %v", err)
	}
	if err := w.Stop(); err != nil {
		t.Errorf("Stop after a failed Start: %v", err)
	}
}

// gate is a destination that takes the header, then blocks every write
// until it is opened.
type gate struct {
	mu     sync.Mutex
	open   chan struct{}
	writes int
	bytes  int
}

func newGate() *gate { return &gate{open: make(chan struct{})} }

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	g.writes++
	n := g.writes
	g.mu.Unlock()
	if n > 1 {
		<-g.open
	}
	g.mu.Lock()
	g.bytes += len(p)
	g.mu.Unlock()
	return len(p), nil
}

// A destination that does not keep up costs at most MaxPending queued
// samples: later batches are dropped, counted, and Stop reports them.
func TestSlowDestinationIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := metrics.RegisterBuiltin(metrics.NewRegistry()).VUs
		dst := newGate()
		w := New(Config{Name: "-", Stdout: dst, Interval: time.Second, Prefix: "test output",
			Description: "test (stdout)", MaxPending: 100}, &lineEncoder{})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		w.Add(batch(m, make([]float64, 30)...))
		time.Sleep(time.Second + time.Millisecond) // the tick takes it and blocks writing it
		synctest.Wait()
		for range 10 {
			w.Add(batch(m, make([]float64, 30)...))
		}
		w.mu.Lock()
		queued, dropped := w.queued, w.dropped
		w.mu.Unlock()
		if queued != 90 || dropped != 210 {
			t.Errorf("with MaxPending 100: %d samples queued, %d dropped; want 90, 210", queued, dropped)
		}
		close(dst.open) // the reader catches up
		err := w.Stop()
		wantErr := "test output: 210 samples were dropped because test (stdout) did not keep up (more than 100 samples waiting)"
		if err == nil || err.Error() != wantErr {
			t.Errorf("Stop = %v, want %q", err, wantErr)
		}
		if got, want := dst.bytes, len(want(m.Name, make([]float64, 120)...)); got != want {
			t.Errorf("the destination got %d bytes, want %d (the header and the 120 queued samples)", got, want)
		}
	})
}

// Stop waits at most StopTimeout for a destination that takes nothing,
// then gives up and counts what it still held.
func TestStopOnStuckDestinationIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := metrics.RegisterBuiltin(metrics.NewRegistry()).VUs
		dst := newGate()
		w := New(Config{Name: "-", Stdout: dst, Interval: time.Second, Prefix: "test output",
			Description: "test (stdout)", StopTimeout: 3 * time.Second}, &lineEncoder{})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		w.Add(batch(m, 1, 2, 3))
		time.Sleep(time.Second + time.Millisecond) // stuck writing these 3
		w.Add(batch(m, 4, 5))
		start := time.Now()
		err := w.Stop()
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("Stop took %v, want the 3s StopTimeout", took)
		}
		want := "test output: test (stdout) took no more data for 3s; up to 5 samples were not written"
		if err == nil || err.Error() != want {
			t.Errorf("Stop = %v, want %q", err, want)
		}
		close(dst.open) // let the abandoned goroutine end
	})
}

// headerless is a lineEncoder that writes nothing in Begin, as the json
// output does.
type headerless struct{ lineEncoder }

func (h *headerless) Begin(w io.Writer) error {
	h.w = w
	return nil
}

// A full disk is an error that counts the samples it cost.
func TestDiskFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	m := metrics.RegisterBuiltin(metrics.NewRegistry()).VUs
	w := New(Config{Name: "/dev/full", Interval: time.Hour, Prefix: "test output", Description: "test (/dev/full)"},
		&headerless{})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	w.Add(batch(m, 1, 2))
	w.Add(batch(m, 3))
	err := w.Stop()
	if err == nil || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), "at least 3 samples were not written") {
		t.Errorf("Stop = %v, want the ENOSPC error and a count of what was lost", err)
	}
}

// A gzip file holds every tick's lines on disk as the run goes: read
// before Stop, the stream is unfinished but decompresses up to them.
func TestGzipFlushedEveryTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := metrics.RegisterBuiltin(metrics.NewRegistry()).VUs
		path := filepath.Join(t.TempDir(), "live.txt.gz")
		w := New(Config{Name: path, Interval: time.Second, Prefix: "test output"}, &lineEncoder{})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		w.Add(batch(m, 1, 2))
		time.Sleep(time.Second + time.Millisecond)
		synctest.Wait()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("no gzip header on disk after the first tick: %v", err)
		}
		got, err := io.ReadAll(zr)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("reading the unfinished stream: %v, want io.ErrUnexpectedEOF", err)
		}
		if want := want(m.Name, 1, 2); string(got) != want {
			t.Errorf("before Stop the file decompresses to %q, want %q", got, want)
		}
	})
}
