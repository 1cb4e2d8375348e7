package js

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sync"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/clock"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// iterationState is the part of a VU that follows the test run: the
// current scenario and what follows from it (exec function, tags,
// iteration counters), setup()'s data and the cookie jar.
type iterationState struct {
	scenario  *executor.Scenario
	started   bool
	fn        sobek.Callable
	fnErr     error
	tags      *metrics.TagSet
	iter      int64
	scenIter  int64
	scenIters map[*executor.Scenario]int64

	setup    *setupData
	setupVal sobek.Value
	args     [1]sobek.Value
	execFn   func() error

	jar      *vuJar
	prepared bool
}

// prepare fills in the parts of the state that do not change between
// iterations; it runs before the VU first runs code outside its init
// context.
func (v *vu) prepare() {
	conf := v.s.config()
	if v.prepared && conf == v.conf {
		return
	}
	v.conf = conf
	v.prepared = true
	hooks := v.s.hooks()
	if v.jar == nil {
		v.jar = &vuJar{}
	}
	st := &v.state
	st.Options = conf.opts
	st.Builtin = conf.builtin
	st.Registry = conf.registry
	st.Recorder = v.rec
	st.SystemTags = conf.systemTags
	st.VUID = v.id
	st.VUIDInTest = conf.idInTest(v.id)
	st.Execution = hooks.exec
	if progress := hooks.progress; progress != nil {
		st.Progress = func() float64 {
			if v.scenario == nil {
				return 0
			}
			return progress(v.scenario.Name)
		}
	}
	st.Jar = v.jar
	st.RPS = conf.rps
	st.Logf = v.s.logf
	st.Fail = hooks.fail
	if st.Fail == nil {
		st.Fail = func(string) {}
	}
	abort := hooks.abort
	st.Abort = func(reason string) {
		if abort != nil {
			abort(reason)
		}
		v.rt.Interrupt(&errAborted{reason: reason})
	}
	v.tags = nil
	v.scenario = nil
	v.started = false
}

// Run runs one iteration of the scenario's exec function.
//
// An idle VU's goroutine sleeps inside the exec function, below Run's
// frame, and every byte of frame above the script counts towards the 4 KB
// its stack must stay within (docs/performance.md): so what comes before
// and after the call runs in calls of their own, off the stack meanwhile.
func (v *vu) Run(ctx context.Context, it executor.Iteration) (res executor.Result) {
	start, err := v.begin(ctx, &it)
	if err == nil {
		err = v.guard(ctx, v.execFn)
	}
	v.end(ctx, start, err, &res)
	return res
}

// begin readies the VU for iteration it and returns its start time, with
// the error that ends it before its exec function is called, if any.
//
//go:noinline
func (v *vu) begin(ctx context.Context, it *executor.Iteration) (time.Time, error) {
	v.prepare()
	var broken error
	if v.suspect {
		broken = v.repair(ctx)
	}
	if !v.started || it.Scenario != v.scenario {
		v.enterScenario(it.Scenario)
	}
	st := &v.state
	st.Iteration = v.iter
	st.IterationInScenario = v.scenIter
	st.Current = *it
	st.Group = ""
	st.Tags = v.tags
	if !v.conf.noCookies {
		v.jar.reset()
	}

	v.running = true
	start := time.Now()
	st.Latency = it.Latency(start)
	switch {
	case ctx.Err() != nil:
		return start, errInterrupted
	case broken != nil:
		v.suspect = true
		return start, broken
	case v.fn == nil:
		return start, v.fnErr
	}
	v.args[0] = v.setupValue()
	if v.execFn == nil {
		v.execFn = v.callExec
	}
	return start, nil
}

// end closes the iteration that began at start and ended with err, and
// sets res.
//
//go:noinline
func (v *vu) end(ctx context.Context, start time.Time, err error, res *executor.Result) {
	end := time.Now()
	v.running = false
	st := &v.state

	v.tags = st.Tags
	if v.conf.groupTag {
		v.tags = v.tags.With("group", "")
	}
	v.emitData(end, v.tags)
	v.iter++
	v.scenIter++

	outcome := executor.Completed
	switch {
	case err == nil:
	case isAbort(err):
		// k6 counts the iteration that called exec.test.abort() as
		// completed: it ended where the script chose to end it.
	case ctx.Err() != nil || isInterrupt(err):
		outcome = executor.Interrupted
	default:
		outcome = executor.Failed
		v.s.logError(v.s.describe(err))
	}
	if outcome != executor.Interrupted && v.conf.minIterDur > 0 {
		if rest := v.conf.minIterDur - end.Sub(start); rest > 0 {
			clock.Sleep(clock.Real, rest, ctx.Done())
		}
	}
	// Samples older than the buffer's age limit go to the engine now, so
	// thresholds see a quiet VU's samples; fresher ones ride with the next
	// iteration's.
	switch f := v.rec.(type) {
	case interface{ FlushIfOlder(time.Time) }:
		f.FlushIfOlder(end)
	case interface{ Flush() }:
		f.Flush()
	}
	*res = executor.Result{Outcome: outcome, Start: start, End: end, Tags: v.tags}
}

// emitData records the bytes the VU moved since the last call as one
// data_sent and one data_received sample, zero included, as k6 emits them
// once per iteration, setup and teardown.
func (v *vu) emitData(at time.Time, tags *metrics.TagSet) {
	st := &v.state
	if b := st.Builtin; b != nil && v.rec != nil {
		if tags == nil {
			tags = metrics.EmptyTags
		}
		v.rec.Record(metrics.Sample{Metric: b.DataSent, Tags: tags, Time: at, Value: float64(st.DataSent)})
		v.rec.Record(metrics.Sample{Metric: b.DataReceived, Tags: tags, Time: at, Value: float64(st.DataReceived)})
	}
	st.DataSent, st.DataReceived = 0, 0
}

func (v *vu) callExec() error {
	ret, err := v.fn(sobek.Undefined(), v.args[:]...)
	if err != nil {
		return err
	}
	if v.loop.pending == 0 && len(v.rejected) == 0 {
		if o, ok := ret.(*sobek.Object); !ok || o.ExportType() != typePromise {
			return nil
		}
	}
	_, err = v.await(ret)
	return err
}

// isAbort reports whether err is the interrupt exec.test.abort() raised.
func isAbort(err error) bool {
	var ie *sobek.InterruptedError
	if errors.As(err, &ie) {
		_, ok := ie.Value().(*errAborted)
		return ok
	}
	var ab *errAborted
	return errors.As(err, &ab)
}

// enterScenario switches the VU to a scenario: its exec function, tags,
// environment and per-scenario iteration counter.
func (v *vu) enterScenario(sc *executor.Scenario) {
	if v.started {
		if v.scenIters == nil {
			v.scenIters = map[*executor.Scenario]int64{}
		}
		v.scenIters[v.scenario] = v.scenIter
	}
	v.started = true
	v.scenario = sc
	v.scenIter = v.scenIters[sc]
	v.lookupExec()
	v.tags = v.conf.scenarioTags(sc)
}

// lookupExec finds the current scenario's exec function.
func (v *vu) lookupExec() {
	exec, name := "default", "default"
	if sc := v.scenario; sc != nil {
		name = sc.Name
		if sc.Exec != "" {
			exec = sc.Exec
		}
	}
	v.env.overlay = nil
	if v.scenario != nil {
		v.env.overlay = v.scenario.Env
	}
	v.fn, v.fnErr = nil, nil
	if f, ok := sobek.AssertFunction(v.exports.Get(exec)); ok {
		v.fn = f
	} else {
		v.fnErr = fmt.Errorf("scenario %s: the script does not export a function named %q", name, exec)
	}
}

// scenarioTags are the tags of a scenario's samples: those the engine
// computed for the run (executor.NewScenarioTags), so that the VUs and the
// executor tag alike. A scenario the engine did not prepare (VUs driven
// directly) gets the same computation from the script's own options.
func (c *runConfig) scenarioTags(sc *executor.Scenario) *metrics.TagSet {
	if sc == nil {
		return c.rootTags
	}
	if sc.TagSets != nil {
		return sc.TagSets.Iteration
	}
	if t, ok := c.scenarioTag.Load(sc); ok {
		return t.(*metrics.TagSet)
	}
	t := executor.NewScenarioTags(c.runTags, c.systemTags, sc).Iteration
	c.scenarioTag.Store(sc, t)
	return t
}

// setupValue is setup()'s result, parsed once per VU.
func (v *vu) setupValue() sobek.Value {
	sd := v.s.setupGen.Load()
	if sd == v.setup && v.setupVal != nil {
		return v.setupVal
	}
	v.setup = sd
	v.setupVal = sobek.Undefined()
	if sd != nil && len(sd.raw) > 0 {
		if val, err := v.parseJSON(sd.raw); err == nil {
			v.setupVal = val
		} else {
			v.s.logf("setup() data cannot be parsed: %v", err)
		}
	}
	return v.setupVal
}

// vuJar is the VU's cookie jar. It is emptied at the start of each
// iteration unless noCookiesReset; it makes the underlying jar only once a
// cookie is stored, so that VUs that never see a cookie pay nothing.
type vuJar struct {
	mu    sync.Mutex
	jar   *cookiejar.Jar
	dirty bool
}

var _ http.CookieJar = (*vuJar)(nil)

// SetCookies stores cookies received from u.
func (j *vuJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.jar == nil {
		j.jar, _ = cookiejar.New(nil)
	}
	j.dirty = true
	j.jar.SetCookies(u, cookies)
}

// Cookies returns the cookies to send to u.
func (j *vuJar) Cookies(u *url.URL) []*http.Cookie {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.jar == nil {
		return nil
	}
	return j.jar.Cookies(u)
}

func (j *vuJar) reset() {
	j.mu.Lock()
	if j.dirty {
		j.jar = nil
		j.dirty = false
	}
	j.mu.Unlock()
}
