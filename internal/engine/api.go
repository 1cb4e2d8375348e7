package engine

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/restapi"
	"github.com/metronome-load/metronome/metrics"
)

// errStoppedByAPI is the outcome of PATCH /v1/status {"stopped":true}.
var errStoppedByAPI = exitcode.Errorf(exitcode.StoppedByAPI, "test run stopped from REST API")

// control is the run as the REST API steers it: its status, the pause of
// --paused, a stop request and the setup data. It exists before the run
// is prepared, so the API answers while VUs initialise.
type control struct {
	run     atomic.Pointer[testRun]
	status  atomic.Int32
	paused  atomic.Bool
	stopped atomic.Bool

	resumeOnce sync.Once
	resumed    chan struct{}
	stopOnce   sync.Once
	stopCh     chan struct{}

	setupMu   sync.Mutex
	setupData json.RawMessage
	setupSet  bool // PUT /v1/setup or setup() gave data
}

func newControl(paused bool) *control {
	c := &control{resumed: make(chan struct{}), stopCh: make(chan struct{})}
	c.status.Store(restapi.StatusInitVUs)
	c.paused.Store(paused)
	return c
}

var _ restapi.Control = (*control)(nil)

// Status is GET /v1/status.
func (c *control) Status() restapi.Status {
	st := int(c.status.Load())
	s := restapi.Status{Status: st, Paused: c.paused.Load(), Stopped: c.stopped.Load(), Running: st == restapi.StatusRunning}
	if r := c.run.Load(); r != nil {
		s.VUs, s.VUsMax = r.state.VUsActive.Load(), r.state.VUsInitialized.Load()
		for _, m := range r.engine.Observed() {
			s.Tainted = s.Tainted || m.Tainted
		}
	}
	return s
}

// Resume lets a test that waits paused start.
func (c *control) Resume() error {
	c.paused.Store(false)
	c.resumeOnce.Do(func() { close(c.resumed) })
	return nil
}

// Pause is refused once the test runs: no executor can pause.
func (c *control) Pause() error {
	if c.status.Load() < restapi.StatusStarted {
		c.paused.Store(true)
		return nil
	}
	return errors.New("the test is running and its executors cannot be paused")
}

// Stop aborts the test.
func (c *control) Stop() {
	c.stopped.Store(true)
	// The abort goes first: a run waiting paused wakes on stopCh and
	// reads it at once, and must not find the test still unaborted.
	if r := c.run.Load(); r != nil {
		r.setAbort(errStoppedByAPI)
	}
	c.stopOnce.Do(func() { close(c.stopCh) })
}

// Metrics are the observed metrics and the time since the test started.
func (c *control) Metrics() ([]metrics.ObservedMetric, time.Duration) {
	r := c.run.Load()
	if r == nil {
		return nil, 0
	}
	var el time.Duration
	if s := r.state.RunStart; !s.IsZero() && c.status.Load() >= restapi.StatusStarted {
		el = r.clock.Now().Sub(s)
	}
	return r.engine.Observed(), el
}

// Groups are the groups seen so far.
func (c *control) Groups() []string {
	if r := c.run.Load(); r != nil {
		return r.engine.Groups()
	}
	return nil
}

// SetupData is the current setup data.
func (c *control) SetupData() json.RawMessage {
	c.setupMu.Lock()
	defer c.setupMu.Unlock()
	return c.setupData
}

// SetSetupData replaces the setup data (PUT /v1/setup).
func (c *control) SetSetupData(d json.RawMessage) {
	c.setupMu.Lock()
	defer c.setupMu.Unlock()
	c.setupData, c.setupSet = d, true
}

// setupGiven returns the data PUT before the run needed it.
func (c *control) setupGiven() (json.RawMessage, bool) {
	c.setupMu.Lock()
	defer c.setupMu.Unlock()
	return c.setupData, c.setupSet
}

var errNotReady = errors.New("the test's VUs are not initialised yet, or the test has ended")

// ready returns the run while its metrics pipeline takes samples.
func (c *control) ready() *testRun {
	if st := c.status.Load(); st < restapi.StatusInitDone || st >= restapi.StatusEnded {
		return nil
	}
	return c.run.Load()
}

// RunSetup runs setup() on a service VU (POST /v1/setup).
func (c *control) RunSetup(ctx context.Context) (json.RawMessage, error) {
	r := c.ready()
	if r == nil {
		return nil, errNotReady
	}
	rec := r.newBuffer()
	defer rec.Flush()
	d, err := r.cfg.Script.Setup(ctx, rec)
	if err != nil {
		return nil, err
	}
	c.SetSetupData(d)
	return d, nil
}

// RunTeardown runs teardown() with the current setup data.
func (c *control) RunTeardown(ctx context.Context) error {
	r := c.ready()
	if r == nil {
		return errNotReady
	}
	rec := r.newBuffer()
	defer rec.Flush()
	return r.cfg.Script.Teardown(ctx, rec, c.SetupData())
}

// waitPaused holds a --paused test, its VUs initialised, until the API
// resumes or stops it or ctx ends.
func (c *control) waitPaused(ctx context.Context) {
	if !c.paused.Load() {
		return
	}
	c.status.Store(restapi.StatusPausedBeforeRun)
	select {
	case <-c.resumed:
	case <-c.stopCh:
	case <-ctx.Done():
	}
}
