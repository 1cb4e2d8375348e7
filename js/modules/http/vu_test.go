package http

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/httpclient"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

// fakeVU is a modules.VU on a bare sobek runtime with a minimal event loop.
type fakeVU struct {
	rt      *sobek.Runtime
	ctx     context.Context
	state   *modules.State
	queue   chan func() error
	pending int
}

func (v *fakeVU) Runtime() *sobek.Runtime   { return v.rt }
func (v *fakeVU) Context() context.Context  { return v.ctx }
func (v *fakeVU) InitEnv() *modules.InitEnv { return nil }
func (v *fakeVU) State() *modules.State     { return v.state }
func (v *fakeVU) RegisterCallback() func(func() error) {
	v.pending++
	return func(f func() error) { v.queue <- f }
}

// recorder keeps every sample; it is only used on the VU goroutine.
type recorder struct{ samples []metrics.Sample }

func (r *recorder) Record(s metrics.Sample) { r.samples = append(r.samples, s) }

// env is one VU with the module imported as the global `http`.
type env struct {
	t      testing.TB
	cancel context.CancelFunc
	vu     *fakeVU
	rec    *recorder
	st     *modules.State
	logs   *logs
}

type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// Write takes one line of the structured log (modules.Run.Log).
func (l *logs) Write(b []byte) (int, error) {
	l.logf("%s", strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// slog is a structured log writing "level=… msg=… key=value" lines into l,
// without the time.
func (l *logs) slog() *slog.Logger {
	drop := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{ReplaceAttr: drop}))
}

func (l *logs) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func newEnv(t testing.TB, opts *config.Options) *env {
	t.Helper()
	if opts == nil {
		opts = &config.Options{}
	}
	reg := metrics.NewRegistry()
	rec := &recorder{}
	client := NewClient(opts)
	t.Cleanup(client.CloseIdleConnections)
	l := &logs{}
	st := &modules.State{
		Options:  opts,
		Builtin:  metrics.RegisterBuiltin(reg),
		Registry: reg,
		Recorder: rec,
		Tags:     metrics.NewTags(map[string]string{"scenario": "default", "group": ""}),
		Client:   client,
		Jar:      httpclient.NewJar(),
		Logf:     l.logf,
		Run:      &modules.Run{Log: l.slog()},
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	vu := &fakeVU{rt: sobek.New(), ctx: ctx, state: st, queue: make(chan func() error, 16)}
	e := &env{t: t, cancel: cancel, vu: vu, rec: rec, st: st, logs: l}
	exports, err := instantiate(vu)
	if err != nil {
		t.Fatal(err)
	}
	obj := vu.rt.NewObject()
	for k, v := range exports.Named {
		if err := obj.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := vu.rt.Set("http", obj); err != nil {
		t.Fatal(err)
	}
	return e
}

// run evaluates src, then runs the event loop until no callback is pending.
func (e *env) run(src string) sobek.Value {
	e.t.Helper()
	v, err := e.try(src)
	if err != nil {
		e.t.Fatalf("script failed: %v", err)
	}
	return v
}

func (e *env) try(src string) (sobek.Value, error) {
	e.t.Helper()
	v, err := e.vu.rt.RunString(src)
	if err != nil {
		return nil, err
	}
	timeout := time.After(10 * time.Second)
	for e.vu.pending > 0 {
		select {
		case f := <-e.vu.queue:
			e.vu.pending--
			if err := f(); err != nil {
				return nil, err
			}
		case <-timeout:
			return nil, errors.New("the event loop did not drain within 10s")
		}
	}
	return v, nil
}

// samples returns the samples of the metric called name.
func (e *env) samples(name string) []metrics.Sample {
	var out []metrics.Sample
	for _, s := range e.rec.samples {
		if s.Metric.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func (e *env) reset() { e.rec.samples = nil }

func tag(s metrics.Sample, k string) string {
	v, _ := s.Tags.Get(k)
	return v
}

func hasTag(s metrics.Sample, k string) bool {
	_, ok := s.Tags.Get(k)
	return ok
}

// okHandler answers 200 with a small text body.
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte("ok"))
})
