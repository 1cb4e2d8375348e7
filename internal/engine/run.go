package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/extension"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/internal/restapi"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// Intervals of the run's background loops, as in k6; the generator's
// health is measured with the vus gauge.
const (
	thresholdInterval = 2 * time.Second
	vusInterval       = health.Period
)

// Run runs one test to its end and returns an error carrying the exit code
// (see package exitcode); nil means exit 0. Cancelling ctx aborts the test
// the way Ctrl-C does: running iterations are interrupted, but teardown,
// the summary and the outputs still complete.
func Run(ctx context.Context, cfg Config) error {
	ctl := newControl(cfg.Paused)
	if cfg.Address != "" {
		ln, err := restapi.Listen(cfg.Address)
		if err != nil {
			return exitcode.Errorf(exitcode.CannotStartAPI, "cannot start the REST API on --address %s: %v", cfg.Address, err)
		}
		srv := restapi.Serve(ln, ctl, cfg.Secrets)
		defer srv.Close()
		if cfg.APIAddr != nil {
			cfg.APIAddr(srv.Addr().String())
		}
	}
	r, err := prepare(ctx, cfg)
	if err != nil {
		return err
	}
	r.ctl = ctl
	ctl.run.Store(r)
	if ctl.stopped.Load() {
		r.setAbort(errStoppedByAPI)
	}
	return r.run(ctx)
}

// testRun is the state of one run.
type testRun struct {
	cfg   Config
	opts  *config.Options
	clock clock.Clock

	reg     *metrics.Registry
	builtin *metrics.Builtin
	engine  *metrics.Engine
	// series warns of too many time series; the sample loop checks it,
	// then the end of the run once the last samples are in.
	series  seriesWatch
	outputs []output.Output

	scenarios []*scenarioRun
	pool      *pool
	state     *executor.State

	systemTags map[string]bool
	runTags    *metrics.TagSet
	// caps is what the script offers, asked once.
	caps executor.Capabilities

	batches    chan ingestItem
	ingestDone chan struct{}
	// inlet takes the samples modules send from goroutines other than
	// their VU's (modules.Run.Samples) into batches.
	inlet *metrics.Inlet
	// batchesMu guards the close of batches: a setup() or teardown() that
	// outlived its timeout may still flush its samples afterwards, and
	// those are dropped rather than sent on the closed channel.
	batchesMu     sync.RWMutex
	batchesClosed bool
	// abandoned is set when a function timed ran outlived its timeout and
	// the grace after it: it may still use its recorder, which the
	// engine then leaves alone.
	abandoned bool

	start time.Time
	// execRecs are the executors' recorders, flushed at the end. Only the
	// run's own goroutine touches the slice: phaseScenarios appends to it
	// before any executor starts, phaseSettle reads it after every one
	// returned.
	execRecs []*lockedRecorder
	// planned is the number of VUs initialised before setup().
	planned int

	// abort is set once, by whatever stops the test early.
	abortMu   sync.Mutex
	abortErr  error
	failErr   error
	cancelRun context.CancelFunc

	// ctl is the run as the REST API sees it.
	ctl *control

	// monitor measures the generator's health; health adds up its
	// intervals for the summary.
	monitor *health.Monitor
	health  healthLog
	// meters are the scenarios' meters whose span is open.
	meters meterSet
}

func prepare(ctx context.Context, cfg Config) (*testRun, error) {
	if cfg.Log == nil {
		cfg.Log = logsink.NewText(cfg.Stderr)
	}
	r := &testRun{
		cfg:        cfg,
		opts:       cfg.Options,
		clock:      clock.Precise,
		reg:        metrics.NewRegistry(),
		state:      &executor.State{},
		batches:    make(chan ingestItem, 4096),
		ingestDone: make(chan struct{}),
	}
	r.builtin = metrics.RegisterBuiltin(r.reg)
	r.monitor = r.newMonitor()
	r.systemTags = systemTagSet(r.opts)
	r.runTags = metrics.NewTags(r.opts.Tags)
	r.caps = cfg.Script.Capabilities()

	cfgs, err := scenarios(r.opts, r.caps)
	if err != nil {
		return nil, err
	}
	for _, c := range cfgs {
		// The executor and the VUs tag the scenario's samples with this
		// one value.
		sc := c.Base()
		tags := executor.NewScenarioTags(r.runTags, r.systemTags, sc)
		sc.TagSets = &tags
		r.scenarios = append(r.scenarios, &scenarioRun{cfg: c})
	}

	r.inlet = metrics.NewInlet(r.handOver)
	if err := cfg.Script.Configure(r.opts, r.reg, r.builtin, r.inlet); err != nil {
		return nil, err
	}
	if connect := r.caps.ConnectRun; connect != nil {
		connect(r.state,
			func(msg string) {
				r.setAbort(scriptEnd{exitcode.Errorf(exitcode.ScriptAborted, "%s", msg)})
			},
			r.markFailed,
			r.scenarioProgress)
	}
	r.pool = newPool(cfg.Script, r.state, r.newBuffer)
	// One VU is initialised here even when no scenario needs one at its
	// start, so that the init context has defined the custom metrics
	// thresholds refer to; run initialises the others once the outputs
	// are running, so that a signal meanwhile still gets a summary.
	r.planned = max(plannedVUs(cfgs), 1)
	if err := r.pool.Preallocate(ctx, 1, 1); err != nil {
		if ctx.Err() != nil {
			return nil, errSignalled("while initialising the first VU")
		}
		return nil, err
	}

	// The first VU's init context has defined the script's metrics and
	// its modules': the latency trends must be among them.
	if _, err := executor.ResolveLatencyTrends(r.reg, r.opts.LatencyTrends); err != nil {
		return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	r.engine, err = metrics.NewEngine(r.reg, engineOptions(ThresholdDefs(r.opts), r.systemTags, configs(r.scenarios), r.opts.LatencyTrends))
	if err != nil {
		return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	if r.outputs, err = r.makeOutputs(); err != nil {
		return nil, err
	}
	return r, nil
}

// Scenarios parses the run's scenarios, refuses what this machine cannot
// run (see checkLimits) and checks that the script exports each one's exec
// function. The CLI calls it too, to reject a bad script before anything
// starts.
func Scenarios(opts *config.Options, s Script) ([]executor.Config, error) {
	return scenarios(opts, s.Capabilities())
}

func scenarios(opts *config.Options, caps executor.Capabilities) ([]executor.Config, error) {
	cfgs, err := config.Scenarios(opts)
	if err != nil {
		return nil, err
	}
	if err := checkLimits(opts, cfgs); err != nil {
		return nil, err
	}
	for _, c := range cfgs {
		b := c.Base()
		if caps.Exports(b.Exec) {
			continue
		}
		path := "scenarios." + b.Name + ".exec"
		if b.Exec == "default" {
			return nil, exitcode.Errorf(exitcode.InvalidConfig,
				"%s: the script has no default export; export a default function or give the scenario an exec function", path)
		}
		return nil, exitcode.Errorf(exitcode.InvalidConfig, "%s: the script does not export a function named %q", path, b.Exec)
	}
	return cfgs, nil
}

// systemTagSet is the set of the run's system tags.
func systemTagSet(o *config.Options) map[string]bool {
	set := map[string]bool{}
	for _, t := range o.SystemTags {
		set[t] = true
	}
	return set
}

// engineOptions are the metrics engine's options for a run of scenarios
// cfgs with the latency trends of options.latencyTrends, and for the merge
// of such runs' result files: one place, so that a merge judges
// thresholds and shows the summary exactly as a single run does.
func engineOptions(defs map[string][]metrics.ThresholdDef, systemTags map[string]bool, cfgs []executor.Config, latencyTrends []string) metrics.EngineOptions {
	return metrics.EngineOptions{
		Thresholds:                defs,
		ExpectedResponseSubmetric: systemTags["expected_response"],
		Submetrics:                append(summarySubmetrics(cfgs, latencyTrends), executor.LatencyTrendSubmetrics(latencyTrends)...),
		Breakdowns:                endpointBreakdowns(systemTags, latencyTrends),
	}
}

// ThresholdDefs are the thresholds of the options, keyed as
// options.thresholds; none with noThresholds.
func ThresholdDefs(o *config.Options) map[string][]metrics.ThresholdDef {
	if o.NoThresholds != nil && *o.NoThresholds {
		return nil
	}
	defs := make(map[string][]metrics.ThresholdDef, len(o.Thresholds))
	for name, ts := range o.Thresholds {
		// A key with an empty list stays: as in k6 it shows its metric,
		// or makes its submetric, in the summary with no threshold.
		list := make([]metrics.ThresholdDef, 0, len(ts))
		for _, t := range ts {
			d := metrics.ThresholdDef{Source: t.Source, AbortOnFail: t.AbortOnFail}
			if t.DelayAbortEval != nil {
				d.DelayAbortEval = t.DelayAbortEval.Std()
			}
			if t.Window != nil {
				d.Window = t.Window.Std()
			}
			list = append(list, d)
		}
		defs[name] = list
	}
	return defs
}

func (r *testRun) makeOutputs() ([]output.Output, error) {
	thresholds := map[string][]string{}
	for name, ts := range r.opts.Thresholds {
		for _, t := range ts {
			thresholds[name] = append(thresholds[name], t.Source)
		}
	}
	var outs []output.Output
	// The options go to the outputs as inspect prints them; they are
	// plain data, so encoding cannot fail.
	opts, _ := json.Marshal(r.opts)
	for _, spec := range r.cfg.Outputs {
		name, arg, _ := strings.Cut(spec, "=")
		c, ok := output.Lookup(name)
		if !ok {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "--out %s: unknown output %q; available: %s",
				output.Redact(spec), name, strings.Join(outputNames(), ", "))
		}
		o, err := c(output.Params{
			Arg: arg, Env: r.cfg.Env, Registry: r.reg, Thresholds: thresholds,
			SystemTags: r.opts.SystemTags, Stdout: r.cfg.Stdout, Stderr: r.cfg.Stderr, Logf: r.logf,
			Log: r.cfg.Log.Slog(slog.LevelInfo), JSONConfig: r.cfg.Collectors[name], StopTest: func(err error) { r.stopTest(name, err) },
			Now: time.Now, Version: config.Version, Secrets: r.cfg.Secrets, Options: opts, Script: r.cfg.ScriptPath,
		})
		if err != nil {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "--out %s: %v", output.Redact(spec), output.Redact(err.Error()))
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// stopTest aborts the run on the request of the output name
// (output.Params.StopTest) with err's exit code, 255 when it has none.
func (r *testRun) stopTest(name string, err error) {
	code, reason := exitcode.Generic, "no reason given"
	if err != nil {
		code, reason = exitcode.Of(err), err.Error()
	}
	r.setAbort(exitcode.Errorf(code, "output %s stopped the test: %s", name, reason))
}

// logf writes a warning through the run's log sink.
func (r *testRun) logf(format string, args ...any) {
	r.cfg.Log.Logf(logsink.Warn, format, args...)
}

// ingestItem is what the ingest loop takes: a batch of samples, or a
// barrier whose synced channel it closes once every batch sent before it
// has been ingested.
type ingestItem struct {
	batch  []metrics.Sample
	synced chan struct{}
}

// ingested returns once every batch handed over before the call has been
// ingested, or when ctx ends; after the end of the run it returns at once.
func (r *testRun) ingested(ctx context.Context) error {
	synced := make(chan struct{})
	r.batchesMu.RLock()
	closed := r.batchesClosed
	if !closed {
		select {
		case r.batches <- ingestItem{synced: synced}:
		case <-ctx.Done():
			r.batchesMu.RUnlock()
			return ctx.Err()
		}
	}
	r.batchesMu.RUnlock()
	if closed {
		return nil
	}
	select {
	case <-synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newBuffer returns a per-VU sample buffer that hands full batches to the
// ingest loop.
func (r *testRun) newBuffer() metrics.VURecorder {
	return metrics.NewBuffer(r.handOver)
}

// handOver gives a batch to the ingest loop, from any goroutine; after the
// end of the run it drops it.
func (r *testRun) handOver(batch []metrics.Sample) {
	r.batchesMu.RLock()
	defer r.batchesMu.RUnlock()
	if !r.batchesClosed {
		r.batches <- ingestItem{batch: batch}
	}
}

// ingest feeds every batch to the metrics engine and the outputs, in order.
func (r *testRun) ingest() {
	defer close(r.ingestDone)
	for item := range r.batches {
		if item.synced != nil {
			close(item.synced)
			continue
		}
		batch := item.batch
		r.engine.Ingest(batch)
		r.meters.add(batch)
		if len(r.outputs) == 0 {
			// Nothing else reads the batch: its buffer can reuse it.
			metrics.ReleaseBatch(batch)
			continue
		}
		for _, o := range r.outputs {
			o.AddSamples(batch)
		}
	}
}

// markFailed records exec.test.fail(): msg, logged at the error level at
// once for every call as in k6, and the test goes on, to end with k6's
// "test run was marked as failed" and exit code 110.
func (r *testRun) markFailed(msg string) {
	r.cfg.Log.Slog(slog.LevelInfo).Error(msg)
	r.abortMu.Lock()
	defer r.abortMu.Unlock()
	if r.failErr == nil {
		r.failErr = scriptEnd{exitcode.Errorf(exitcode.MarkedAsFailed, "test run was marked as failed")}
	}
}

// scenarioProgress is exec.scenario.progress: the fraction of the
// scenario's duration that has passed.
func (r *testRun) scenarioProgress(name string) float64 {
	for _, sc := range r.scenarios {
		if sc.cfg.Base().Name != name {
			continue
		}
		p := sc.progress()
		if p.Done {
			return 1
		}
		if p.Total <= 0 {
			return 0
		}
		return min(float64(p.Elapsed)/float64(p.Total), 1)
	}
	return 0
}

// setAbort records the first reason the test stops early and cancels it.
func (r *testRun) setAbort(err error) {
	r.abortMu.Lock()
	defer r.abortMu.Unlock()
	if r.abortErr == nil {
		r.abortErr = err
		if r.cancelRun != nil {
			r.cancelRun()
		}
	}
}

// errSignalled is the error of a test stopped by SIGINT or SIGTERM (the
// cancellation of Run's context); when says at which stage.
func errSignalled(when string) error {
	msg := "test run aborted by signal"
	if when != "" {
		msg += " " + when
	}
	return exitcode.Errorf(exitcode.ExternalAbort, "%s", msg)
}

// signalled records a signal as the test's abort reason once parent has
// been cancelled (the watch on parent does so too, but from a goroutine of
// its own, possibly later) and returns the abort reason; nil while no
// signal came.
func (r *testRun) signalled(parent context.Context) error {
	if parent.Err() == nil {
		return nil
	}
	r.setAbort(errSignalled(""))
	return r.abortError()
}

func (r *testRun) abortError() error {
	r.abortMu.Lock()
	defer r.abortMu.Unlock()
	return r.abortErr
}

// run runs the test in five phases: start (outputs, ingest, banner),
// setup (VUs, the REST API's pause, setup()), scenarios, teardown and
// settle (the last samples, thresholds, summary, outputs, exit error).
// Each phase after start ends early on a signal (parent cancelled); the
// test then goes straight to settle, as k6 does, except that teardown()
// still runs after the scenarios were cut short.
func (r *testRun) run(parent context.Context) error {
	ctx, stop, err := r.phaseStart(parent)
	if err != nil {
		return err
	}
	defer stop()
	out := r.phaseSetup(ctx, parent)
	if out.err == nil {
		out.err = r.phaseScenarios(ctx, out.setupData)
		if out.err == nil {
			out.err = r.phaseTeardown(ctx, out.service)
		}
	}
	return r.phaseSettle(parent, out)
}

// phased is what the phases of a run hand on to settle.
type phased struct {
	// service records the samples of setup() and teardown().
	service metrics.VURecorder
	// setupData is setup()'s result, or what the REST API gave.
	setupData []byte
	// err is the run's own error, the first a phase met.
	err error
	// summarise is false when nothing ran: a VU's init context failed.
	summarise bool
}

// phaseStart starts the outputs, the ingest loop and the run's context,
// which a signal (parent cancelled) or an abort cancels, and prints the
// banner. It returns the context and what releases it; an output that
// fails to start ends the run before anything is measured.
func (r *testRun) phaseStart(parent context.Context) (context.Context, func(), error) {
	for i, o := range r.outputs {
		if err := o.Start(); err != nil {
			for _, started := range r.outputs[:i] {
				_ = started.Stop() // close what the others opened; nothing was measured
			}
			return nil, nil, exitcode.Errorf(exitcode.Generic, "output %s: %v", o.Description(), err)
		}
	}
	go r.ingest()
	if !r.cfg.Quiet {
		r.printBanner()
	}
	ctx, cancel := context.WithCancel(parent)
	r.abortMu.Lock()
	r.cancelRun = cancel
	if r.abortErr != nil {
		cancel()
	}
	r.abortMu.Unlock()
	stopWatch := context.AfterFunc(parent, func() { r.setAbort(errSignalled("")) })
	return ctx, func() { stopWatch(); cancel() }, nil
}

// phaseSetup initialises the planned VUs, waits while the REST API keeps
// the test paused, starts the test's clock and runs setup().
func (r *testRun) phaseSetup(ctx, parent context.Context) phased {
	out := phased{summarise: true}
	if err := r.pool.Preallocate(ctx, r.planned-1, 2*runtime.GOMAXPROCS(0)); err != nil {
		r.signalled(parent)
		if out.err = r.abortError(); out.err == nil {
			// A VU's init context failed: like a failure of the first
			// one, nothing ran, so there is nothing to summarise.
			out.err, out.summarise = err, false
		}
	}
	r.ctl.status.Store(restapi.StatusInitDone)
	if out.err == nil {
		// --paused: nothing, not even setup(), runs before the REST API
		// resumes the test. As in k6, the vus and vus_max gauges are
		// recorded once before the wait, so that GET /v1/metrics shows
		// the initialised VUs (and vus' minimum in the summary is 0).
		if r.ctl.paused.Load() {
			rec := r.newBuffer()
			r.recordVUs(rec, 0)
			rec.Flush()
		}
		r.ctl.waitPaused(ctx)
		r.signalled(parent)
		out.err = r.abortError()
	}
	// The test's clock starts once the VUs are ready, as before.
	r.start = r.clock.Now()
	r.state.RunStart = r.start
	r.engine.SetStart(r.start)
	r.ctl.status.Store(restapi.StatusStarted)
	out.service = r.newBuffer()
	if d, ok := r.ctl.setupGiven(); ok {
		out.setupData = d
	}
	if out.err == nil && !isTrue(r.opts.NoSetup) {
		r.ctl.status.Store(restapi.StatusSetup)
		out.setupData, out.err = r.timed(ctx, optDuration(r.opts.SetupTimeout, 60*time.Second), exitcode.SetupTimeout, "setup()",
			func(c context.Context) ([]byte, error) { return r.cfg.Script.Setup(c, out.service) })
		if out.err != nil {
			// When a signal stopped the test, setup() failed because
			// it was interrupted: the signal is the reason.
			if sig := r.signalled(parent); sig != nil {
				out.err = sig
			}
		}
	}
	return out
}

// phaseTeardown runs teardown() unless the options leave it out. It runs
// after an abort too, on a context of its own, with the setup data as PUT
// /v1/setup may have replaced it.
func (r *testRun) phaseTeardown(ctx context.Context, service metrics.VURecorder) error {
	if isTrue(r.opts.NoTeardown) {
		return nil
	}
	r.ctl.status.Store(restapi.StatusTeardown)
	_, err := r.timed(context.WithoutCancel(ctx), optDuration(r.opts.TeardownTimeout, 60*time.Second),
		exitcode.TeardownTimeout, "teardown()", func(c context.Context) ([]byte, error) {
			return nil, r.cfg.Script.Teardown(c, service, r.ctl.SetupData())
		})
	return err
}

// phaseSettle ends the run: it drains the last samples into the metrics
// engine, evaluates the thresholds, hands the summary and the run's end
// to the outputs, stops them, prints the summary and returns the error
// that sets the exit code.
func (r *testRun) phaseSettle(parent context.Context, out phased) error {
	end := r.clock.Now()
	if out.err != nil || r.abortError() != nil {
		r.ctl.status.Store(restapi.StatusInterrupted)
	} else {
		r.ctl.status.Store(restapi.StatusEnded)
	}
	r.drain(out.service)
	// The last iteration's samples are in only now: a run too short for
	// the sample loop's next tick still warns of what they made.
	r.series.check(r.logf)
	report := r.engine.EvaluateThresholds(end.Sub(r.start), true)
	// One summary for everything that shows it: the outputs that take it
	// (the web dashboard's report) get it before they stop, the end of
	// the run prints or exports it after.
	sum := r.summaryInput(end.Sub(r.start), out.setupData, report)
	r.handSummary(sum)
	r.handEnd(end.Sub(r.start), out.setupData, out.err)
	// The outputs finish before the summary, so that a stuck standard
	// output costs one bounded wait, and the summary follows the last
	// lines of -o json=- instead of sitting among them.
	outErr := r.stopOutputs(parent)
	var sumErr error
	if out.summarise {
		sumErr = r.finish(parent, sum)
	}
	r.signalled(parent)
	err := r.exitError(out.err, sumErr, report)
	if err == nil {
		return outErr
	}
	if outErr != nil {
		r.logf("%v", outErr) // another error sets the exit code; still say what was lost
	}
	return err
}

// drain flushes every recorder that may still hold samples (setup's and
// teardown's unless a timed function was abandoned with it, the VUs', the
// executors'), closes the ingest loop's channel and waits until the
// loop has taken everything.
func (r *testRun) drain(service metrics.VURecorder) {
	if !r.abandoned {
		service.Flush()
	}
	r.pool.EachRecorder(metrics.VURecorder.Flush)
	for _, l := range r.execRecs {
		l.Flush()
	}
	r.batchesMu.Lock()
	r.batchesClosed = true
	close(r.batches)
	r.batchesMu.Unlock()
	r.inlet.Close()
	<-r.ingestDone
}

// exitError is the error that sets the exit code of a run that has ended,
// apart from the outputs': the first of the run's own error, the abort
// reason, the summary's error, exec.test.fail() and failed thresholds.
func (r *testRun) exitError(runErr, sumErr error, report *metrics.ThresholdReport) error {
	switch {
	case runErr != nil:
		return runErr
	case r.abortError() != nil:
		return r.abortError()
	case sumErr != nil:
		return sumErr
	case r.failErr != nil:
		return r.failErr
	case !isTrue(r.opts.NoThresholds) && report.Failed():
		return crossed(report)
	}
	return nil
}

// crossed is the error, exit code 99, of thresholds that failed at the end
// of a test.
func crossed(report *metrics.ThresholdReport) error {
	return exitcode.Errorf(exitcode.ThresholdsFailed, "thresholds on metrics '%s' have been crossed",
		strings.Join(report.FailedMetrics(), "', '"))
}

// phaseScenarios hands the setup data to the VUs and runs every scenario
// from its startTime, with the vus gauge and the periodic threshold
// evaluation alongside.
func (r *testRun) phaseScenarios(ctx context.Context, setupData []byte) error {
	r.ctl.SetSetupData(setupData)
	r.ctl.status.Store(restapi.StatusRunning)
	if set := r.caps.SetSetupData; set != nil {
		set(setupData)
	}
	var pb *progressBars
	if !r.cfg.Quiet && r.cfg.StderrTTY {
		pb = startProgress(r.cfg.Stderr, r.scenarios)
	}
	r.series = newSeriesWatch()
	loops, stopLoops := context.WithCancel(ctx)
	var loopsDone sync.WaitGroup
	loopsDone.Add(3)
	go func() { defer loopsDone.Done(); r.sampleLoop(loops) }()
	go func() { defer loopsDone.Done(); r.thresholdLoop(loops) }()
	go func() { defer loopsDone.Done(); r.flushLoop(loops) }()

	execStart := r.clock.Now()
	r.state.Start = execStart
	errs := make(chan error, len(r.scenarios))
	for _, sc := range r.scenarios {
		tags := sc.cfg.Base().TagSets
		rec := r.executorRecorder()
		deps := executor.Deps{
			Pool: r.pool, Clock: r.clock, Metrics: r.builtin,
			Tags: tags.Executor, IterationTags: tags.Iteration,
			Recorder: rec,
			State:    r.state, Logf: r.logf,
			Meter: r.newMeter(sc.cfg.Base().Name, rec),
		}
		go func() { errs <- sc.run(ctx, r.clock, execStart, deps) }()
	}
	var firstErr error
	for range r.scenarios {
		if err := <-errs; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	stopLoops()
	loopsDone.Wait()
	if pb != nil {
		pb.Stop()
	}
	return firstErr
}

// sampleLoop samples the vus and vus_max gauges and the generator's
// health every second; the last health interval ends with the loop.
// Health rides on the gauges' tick rather than a timer of its own, so
// measuring it wakes the process no more often.
func (r *testRun) sampleLoop(ctx context.Context) {
	rec := r.newBuffer()
	defer rec.Flush()
	sample := func() bool {
		r.series.check(r.logf)
		active := 0
		for _, sc := range r.scenarios {
			active += sc.progress().ActiveVUs
		}
		r.recordVUs(rec, active)
		r.tickHealth(rec)
		rec.Flush()
		return true
	}
	sample()
	every(ctx, vusInterval, sample)
	r.tickHealth(rec)
}

// every calls f at each tick of interval until ctx ends or f returns
// false. It ticks with time.NewTicker so that synctest bubbles drive it.
func every(ctx context.Context, interval time.Duration, f func() bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !f() {
			return
		}
	}
}

// recordVUs records the vus gauge (active VUs) and vus_max (the VUs
// initialised so far).
func (r *testRun) recordVUs(rec metrics.Recorder, active int) {
	now := r.clock.Now()
	rec.Record(metrics.Sample{Metric: r.builtin.VUs, Tags: r.runTags, Time: now, Value: float64(active)})
	rec.Record(metrics.Sample{Metric: r.builtin.VUsMax, Tags: r.runTags, Time: now, Value: float64(r.pool.Initialized())})
}

// flushLoop hands the samples of VUs that are blocked (in sleep() or
// waiting for an event) to the metrics engine once they are
// metrics.BufferMaxAge old, so that thresholds and outputs see what a
// running iteration recorded without waiting for it to end.
func (r *testRun) flushLoop(ctx context.Context) {
	every(ctx, metrics.BufferMaxAge/2, func() bool {
		now := r.clock.Now()
		r.pool.EachRecorder(func(rec metrics.VURecorder) { rec.FlushParked(now) })
		return true
	})
}

// thresholdLoop evaluates thresholds every two seconds and aborts the test
// when an abortOnFail threshold fails.
func (r *testRun) thresholdLoop(ctx context.Context) {
	if isTrue(r.opts.NoThresholds) {
		return
	}
	every(ctx, thresholdInterval, func() bool {
		rep := r.engine.EvaluateThresholds(r.clock.Now().Sub(r.start), false)
		if rep.Abort() {
			r.setAbort(exitcode.Errorf(exitcode.ThresholdsFailed,
				"thresholds on metrics '%s' were crossed; the test was aborted (abortOnFail)",
				strings.Join(rep.FailedMetrics(), "', '")))
			return false
		}
		return true
	})
}

// interruptGrace is how long timed waits, after the timeout, for the
// interrupted function to return.
const interruptGrace = time.Second

// timed runs f with a timeout; running over it is an error with code.
func (r *testRun) timed(ctx context.Context, limit time.Duration, code int, what string,
	f func(context.Context) ([]byte, error)) ([]byte, error) {
	c, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		d, err := f(c)
		done <- result{d, err}
	}()
	select {
	case res := <-done:
		if res.err != nil && errors.Is(c.Err(), context.DeadlineExceeded) {
			return nil, exitcode.Errorf(code, "%s did not finish within %s", what, limit)
		}
		return res.data, res.err
	case <-c.Done():
		if errors.Is(c.Err(), context.DeadlineExceeded) {
			// The interrupted function usually ends at once; waiting a
			// little for it keeps the samples it emits on the way out
			// (k6 reports a timed-out setup's data_sent, for one).
			select {
			case <-done:
			case <-time.After(interruptGrace):
				r.abandoned = true
			}
			return nil, exitcode.Errorf(code, "%s did not finish within %s", what, limit)
		}
		res := <-done
		return res.data, res.err
	}
}

func (r *testRun) printBanner() {
	w := r.cfg.Stdout
	fmt.Fprintf(w, "\n  execution: local\n     script: %s\n", r.cfg.ScriptPath)
	outs := "-"
	if len(r.outputs) > 0 {
		var ds []string
		for _, o := range r.outputs {
			ds = append(ds, o.Description())
		}
		outs = strings.Join(ds, ", ")
	}
	fmt.Fprintf(w, "     output: %s\n\n", outs)
	cfgs := make([]executor.Config, len(r.scenarios))
	maxVUs := 0
	for i, sc := range r.scenarios {
		cfgs[i] = sc.cfg
		maxVUs += sc.cfg.MaxVUs()
	}
	plural := "s"
	if len(cfgs) == 1 {
		plural = ""
	}
	// The share of the test this instance runs, as k6 prints it: its
	// execution segment's length (the options were checked before).
	share := 1.0
	if t, err := r.opts.ExecutionTuple(); err == nil {
		share = t.Length()
	}
	fmt.Fprintf(w, "  scenarios: (%.2f%%) %d scenario%s, %d max VUs, %s max duration (incl. graceful stop):\n",
		share*100, len(cfgs), plural, maxVUs, maxDuration(cfgs))
	names := make([]*scenarioRun, len(r.scenarios))
	copy(names, r.scenarios)
	sort.SliceStable(names, func(i, j int) bool { return names[i].cfg.Base().Name < names[j].cfg.Base().Name })
	for _, sc := range names {
		b := sc.cfg.Base()
		extra := ""
		if b.StartTime > 0 {
			extra = fmt.Sprintf(", startTime: %s", b.StartTime)
		}
		fmt.Fprintf(w, "           * %s: %s%s\n", b.Name, sc.cfg.Description(), extra)
	}
	fmt.Fprintln(w)
}

// executorRecorder returns a recorder for one executor's own samples,
// remembered so that the run can flush it at the end.
func (r *testRun) executorRecorder() *lockedRecorder {
	l := &lockedRecorder{rec: r.newBuffer()}
	r.execRecs = append(r.execRecs, l)
	return l
}

// lockedRecorder serialises executor-level samples, which several
// goroutines of one executor may emit.
type lockedRecorder struct {
	mu  sync.Mutex
	rec metrics.VURecorder
}

func (l *lockedRecorder) Record(s metrics.Sample) {
	l.mu.Lock()
	l.rec.Record(s)
	l.mu.Unlock()
}

func (l *lockedRecorder) Flush() {
	l.mu.Lock()
	l.rec.Flush()
	l.mu.Unlock()
}

func isTrue(b *bool) bool { return b != nil && *b }

func optDuration(d *duration.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Std()
}

func outputNames() []string { return extension.Names(extension.Output) }
