package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/summary"

	_ "github.com/metronome-load/metronome/output/prometheus"
)

// fakeOutput is an output whose Stop fails with err, or, with block set,
// signals stopping and waits for block to close.
type fakeOutput struct {
	err      error
	block    chan struct{}
	stopping chan struct{}
}

func (f *fakeOutput) Description() string               { return "fake (test)" }
func (f *fakeOutput) Start() error                      { return nil }
func (f *fakeOutput) AddSamples(batch []metrics.Sample) {}
func (f *fakeOutput) Stop() error {
	if f.block != nil {
		close(f.stopping)
		<-f.block
	}
	return f.err
}

// The fake outputs are registered once; each test sets the instance the
// constructor returns.
var (
	registerFakes sync.Once
	fakeMu        sync.Mutex
	fakeNext      output.Output
)

func useFakeOutput(f output.Output) func(*Config) {
	registerFakes.Do(func() {
		output.Register("engine-test-fake", func(output.Params) (output.Output, error) {
			fakeMu.Lock()
			defer fakeMu.Unlock()
			return fakeNext, nil
		})
	})
	fakeMu.Lock()
	fakeNext = f
	fakeMu.Unlock()
	return func(c *Config) { c.Outputs = []string{"engine-test-fake"} }
}

// capableOutput takes every optional capability of the output kit and
// records the order of the engine's calls.
type capableOutput struct {
	fakeOutput
	calls   []string
	samples int
	sum     *summary.Input
	end     output.RunEnd
}

func (c *capableOutput) AddSamples(batch []metrics.Sample) {
	if len(c.calls) == 0 || c.calls[len(c.calls)-1] != "samples" {
		c.calls = append(c.calls, "samples")
	}
	c.samples += len(batch)
}
func (c *capableOutput) ReceiveSummary(in *summary.Input) {
	c.calls, c.sum = append(c.calls, "summary"), in
}
func (c *capableOutput) ReceiveEnd(end output.RunEnd) { c.calls, c.end = append(c.calls, "end"), end }
func (c *capableOutput) Stop() error                  { c.calls = append(c.calls, "stop"); return nil }

// An extension's output gets the optional capabilities exactly as the
// built-ins do, through the output kit's interfaces: the summary the run
// prints, then the end of the run, both after the last sample and before
// Stop.
func TestOutputCapabilities(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &capableOutput{}
		err, out, _ := runFake(t, context.Background(), &fakeScript{work: time.Millisecond}, `{"iterations": 3}`, useFakeOutput(c))
		if err != nil {
			t.Fatalf("run: %v\n%s", err, out)
		}
		if want := []string{"samples", "summary", "end", "stop"}; !slices.Equal(c.calls, want) {
			t.Errorf("calls %v, want %v", c.calls, want)
		}
		if c.samples == 0 || c.sum == nil || c.end.Elapsed <= 0 {
			t.Fatalf("samples %d, summary %v, elapsed %v", c.samples, c.sum != nil, c.end.Elapsed)
		}
		var iterations float64 = -1
		for _, m := range c.sum.Metrics {
			if cs, ok := m.Sink.(*metrics.CounterSink); ok && m.Name == "iterations" {
				iterations = cs.Sum
			}
		}
		if iterations != 3 {
			t.Errorf("the summary handed over counts %v iterations, want 3", iterations)
		}
	})
}

// An output that lost samples fails an otherwise passing run with 255 and
// says what was lost.
func TestOutputLossFailsTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeOutput{err: errors.New("12 samples were dropped")}
		err, out, _ := runFake(t, context.Background(), &fakeScript{work: time.Millisecond}, `{"iterations": 2}`, useFakeOutput(f))
		if exitcode.Of(err) != exitcode.Generic || !strings.Contains(err.Error(), "output fake (test): 12 samples were dropped") {
			t.Fatalf("got %v (exit %d), want exit 255 naming the loss\n%s", err, exitcode.Of(err), out)
		}
	})
}

// When another error sets the exit code, the output's loss is still
// reported.
func TestOutputLossReportedBehindThresholds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeOutput{err: errors.New("12 samples were dropped")}
		err, out, _ := runFake(t, context.Background(), &fakeScript{work: time.Millisecond},
			`{"iterations": 2, "thresholds": {"http_reqs": ["count<1"]}}`, useFakeOutput(f))
		if exitcode.Of(err) != exitcode.ThresholdsFailed {
			t.Fatalf("got %v (exit %d), want 99", err, exitcode.Of(err))
		}
		if !strings.Contains(out, "WARN[") || !strings.Contains(out, "] output fake (test): 12 samples were dropped") {
			t.Errorf("the loss was not reported:\n%s", out)
		}
	})
}

// An output whose Stop never returns holds the exit for outputStopTimeout
// at most.
func TestStuckOutputWaitIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeOutput{block: make(chan struct{}), stopping: make(chan struct{})}
		defer close(f.block)
		stopAt := make(chan time.Time, 1)
		go func() { <-f.stopping; stopAt <- time.Now() }()
		err, out, _ := runFake(t, context.Background(), &fakeScript{work: time.Millisecond}, `{"iterations": 1}`, useFakeOutput(f))
		if waited := time.Since(<-stopAt); waited != outputStopTimeout {
			t.Errorf("waited %v for the stuck output, want %v", waited, outputStopTimeout)
		}
		if exitcode.Of(err) != exitcode.Generic || !strings.Contains(err.Error(), "gave up waiting 15s for fake (test)") {
			t.Fatalf("got %v (exit %d), want exit 255 naming the stuck output\n%s", err, exitcode.Of(err), out)
		}
	})
}

// A first Ctrl-C while the run waits for a stuck output ends the wait at
// once, with exit 105.
func TestSignalEndsTheOutputWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeOutput{block: make(chan struct{}), stopping: make(chan struct{})}
		defer close(f.block)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stopAt := make(chan time.Time, 1)
		go func() {
			<-f.stopping
			stopAt <- time.Now()
			time.Sleep(time.Second)
			cancel()
		}()
		err, out, _ := runFake(t, ctx, &fakeScript{work: time.Millisecond}, `{"iterations": 1}`, useFakeOutput(f))
		if waited := time.Since(<-stopAt); waited != time.Second {
			t.Errorf("waited %v after the signal came 1s into the wait, want 1s", waited)
		}
		if exitcode.Of(err) != exitcode.ExternalAbort {
			t.Fatalf("got %v (exit %d), want 105\n%s", err, exitcode.Of(err), out)
		}
		// The signal's abort sets the exit code; what the output lost is
		// still said.
		if !strings.Contains(out, "WARN[") || !strings.Contains(out, "] stopped waiting for fake (test) on a signal") {
			t.Errorf("the abandoned output is not named:\n%s", out)
		}
	})
}

// A password in an -o argument is not quoted back in the error.
func TestBadOutputKeepsPassword(t *testing.T) {
	for _, spec := range []string{"nope=https://bob:pw5678@h.test/x", "experimental-prometheus-rw=ftp://bob:pw5678@h.test/x"} {
		err, _, _ := runFake(t, context.Background(), &fakeScript{}, `{"iterations": 1}`, func(c *Config) { c.Outputs = []string{spec} })
		if err == nil || strings.Contains(err.Error(), "pw5678") || !strings.Contains(err.Error(), "bob:xxxxx@h.test") {
			t.Errorf("-o %s: got %v, want an error quoting the URL without its password", spec, err)
		}
	}
}

// When an output cannot start, the ones started before it are stopped,
// so their files are closed (a gzip stream is complete).
func TestFailedStartStopsStartedOutputs(t *testing.T) {
	dir := t.TempDir()
	gz := filepath.Join(dir, "out.json.gz")
	err, _, _ := runFake(t, context.Background(), &fakeScript{}, `{"iterations": 1}`, func(c *Config) {
		c.Outputs = []string{"json=" + gz, "json=" + filepath.Join(dir, "missing", "x.json")}
	})
	if exitcode.Of(err) != exitcode.Generic {
		t.Fatalf("got %v, want exit 255 for the second output", err)
	}
	f, ferr := os.Open(gz)
	if ferr != nil {
		t.Fatal(ferr)
	}
	defer f.Close()
	zr, zerr := gzip.NewReader(f)
	if zerr != nil {
		t.Fatalf("the first output's file is not a closed gzip stream: %v", zerr)
	}
	if _, rerr := io.ReadAll(zr); rerr != nil {
		t.Errorf("the first output's gzip stream is truncated: %v", rerr)
	}
}

// boundRecorder is a Stdout that records the bounds the run sets.
type boundRecorder struct {
	bytes.Buffer
	mu     sync.Mutex
	bounds []time.Duration
}

func (b *boundRecorder) BoundWrites(p time.Duration) {
	b.mu.Lock()
	b.bounds = append(b.bounds, p)
	b.mu.Unlock()
}

// Once the test has ended, standard output gets its patience, and a
// signal during the output wait gives it up, so the summary does not hold
// the exit either.
func TestStdoutBoundedAtTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := &boundRecorder{}
		runFake(t, context.Background(), &fakeScript{work: time.Millisecond}, `{"iterations": 1}`,
			func(c *Config) { c.Stdout = out })
		if fmt.Sprint(out.bounds) != fmt.Sprint([]time.Duration{stdoutPatience}) {
			t.Errorf("bounds %v, want [%v]", out.bounds, stdoutPatience)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		f := &fakeOutput{block: make(chan struct{}), stopping: make(chan struct{})}
		defer close(f.block)
		out := &boundRecorder{}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { <-f.stopping; cancel() }()
		extra := useFakeOutput(f)
		runFake(t, ctx, &fakeScript{work: time.Millisecond}, `{"iterations": 1}`,
			func(c *Config) { extra(c); c.Stdout = out })
		if fmt.Sprint(out.bounds) != fmt.Sprint([]time.Duration{stdoutPatience, 0}) {
			t.Errorf("bounds %v, want [%v 0]", out.bounds, stdoutPatience)
		}
	})
}

// stoppingOutput stops the test through Params.StopTest at its first
// batch, as an output that lost its service would, and keeps the end of
// the run it is told.
type stoppingOutput struct {
	capableOutput
	stop func(error)
}

func (s *stoppingOutput) AddSamples(batch []metrics.Sample) {
	if s.samples == 0 {
		s.stop(exitcode.Wrap(exitcode.ScriptAborted, errors.New("its service went away")))
	}
	s.capableOutput.AddSamples(batch)
}

var registerStopper sync.Once

// An output's StopTest aborts the run with the output's error, exit code
// and name, and the output learns that error at the end of the run.
func TestOutputStopsTheTest(t *testing.T) {
	s := &stoppingOutput{}
	registerStopper.Do(func() {
		output.Register("engine-test-stopper", func(p output.Params) (output.Output, error) {
			s.stop = p.StopTest
			return s, nil
		})
	})
	synctest.Test(t, func(t *testing.T) {
		err, out, _ := runFake(t, context.Background(), &fakeScript{work: time.Millisecond}, `{"vus": 1, "duration": "1h"}`,
			func(c *Config) { c.Outputs = []string{"engine-test-stopper"} })
		want := "output engine-test-stopper stopped the test: its service went away"
		if exitcode.Of(err) != exitcode.ScriptAborted || err == nil || err.Error() != want {
			t.Fatalf("got %v (exit %d), want %q with the error's exit code 108\n%s", err, exitcode.Of(err), want, out)
		}
		if s.end.Err == nil || s.end.Err.Error() != want {
			t.Errorf("RunEnd.Err %v, want the output's abort", s.end.Err)
		}
	})
}
