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
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

// iterationState is the part of a VU that follows the test run: the
// current scenario and what follows from it (exec function, tags,
// iteration counters), setup()'s data and the cookie jar.
type iterationState struct {
	scenario *executor.Scenario
	started  bool
	prepared bool
	// running is set while setup, an iteration or teardown runs, when
	// the VU offers modules its State. It sits beside the other flags,
	// where the vu has room for it (TestVUFitsItsSizeClass).
	running   bool
	fn        sobek.Callable
	fnErr     error
	tags      *metrics.TagSet
	iter      int64
	scenIter  int64
	scenIters map[*executor.Scenario]int64

	setup    *setupData
	setupVal sobek.Value

	jar *vuJar
}

// restart makes the state follow a new run configuration: no scenario
// entered yet, and a cookie jar.
func (it *iterationState) restart() {
	it.prepared = true
	if it.jar == nil {
		it.jar = &vuJar{}
	}
	it.tags = nil
	it.scenario = nil
	it.started = false
}

// setRunning marks whether the VU runs setup, an iteration or teardown,
// when its State is offered to modules.
func (it *iterationState) setRunning(on bool) { it.running = on }

// prepare fills in the parts of the state that do not change between
// iterations; it runs before the VU first runs code outside its init
// context.
func (v *vu) prepare() {
	conf := v.s.config()
	if v.prepared && conf == v.conf {
		return
	}
	v.conf = conf
	v.restart()
	hooks := v.s.hooks()
	st := &v.state
	st.Options = conf.opts
	st.Builtin = conf.builtin
	st.Registry = conf.registry
	st.Recorder = v.gate()
	if conf.latencyTrends != nil && conf.builtin != nil {
		if trends := conf.latencyTrends(); len(trends) > 0 {
			st.Recorder = gatedTrends{
				LatencyRecorder: executor.NewLatencyRecorder(v.gate(), &st.Latency, conf.builtin.CorrectedLatency, trends),
				ungated:         executor.NewLatencyRecorder(v.rec, &st.Latency, conf.builtin.CorrectedLatency, trends),
			}
		}
	}
	st.SystemTags = conf.systemTags
	st.VUIDInTest = conf.idInTest(st.VUID)
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
	st.Run = conf.run
	st.Fail = hooks.fail
	if st.Fail == nil {
		st.Fail = func(string) {}
	}
	abort := hooks.abort
	st.Abort = func(reason string) {
		ab := &errAborted{reason: reason}
		if abort != nil {
			// k6's line names where the script called abort().
			abort(ab.Error() + v.s.callerText(v.rt))
		}
		v.rt.Interrupt(ab)
	}
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
		v.enterScenario(it.Scenario, v.conf.scenarioTags(it.Scenario), v.exports)
		v.env.useScenario(it.Scenario)
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

	v.setRunning(true)
	start := time.Now()
	st.Latency = it.Latency(start)
	v.openInlet(ctx)
	switch {
	case ctx.Err() != nil:
		return start, errInterrupted
	case broken != nil:
		v.distrust()
		return start, broken
	case v.fn == nil:
		return start, v.fnErr
	}
	v.args[0] = v.setupValue(v.s, v.rt, &v.json)
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
	v.setRunning(false)
	v.closeInlet()
	st := &v.state

	tags := st.Tags
	if v.conf.groupTag {
		tags = tags.With("group", "")
	}
	emitData(v.rec, st, end, tags)
	v.count(tags)

	outcome := executor.Completed
	switch {
	case err != nil && isAbort(err):
		// k6 counts the iteration that called exec.test.abort() as
		// completed: it ended where the script chose to end it.
	case ctx.Err() != nil || err != nil && isInterrupt(err):
		// However it ended: an exec function that returned because the
		// VU was stopping (a ws.connect the stop closed) did not run to
		// its end, and k6 counts it interrupted too.
		outcome = executor.Interrupted
	case err == nil:
	default:
		outcome = executor.Failed
		v.s.logIterationError(err, v.scenario)
	}
	if outcome != executor.Interrupted && v.conf.minIterDur > 0 {
		if rest := v.conf.minIterDur - end.Sub(start); rest > 0 {
			clock.Sleep(clock.Real, rest, ctx.Done())
		}
	}
	// Samples older than the buffer's age limit go to the engine now, so
	// thresholds see a quiet VU's samples; fresher ones ride with the next
	// iteration's.
	flushAged(v.rec, end)
	*res = executor.Result{Outcome: outcome, Start: start, End: end, Tags: tags}
}

// count closes an iteration whose samples carried tags: the next one
// starts from them, and the counters move on.
func (it *iterationState) count(tags *metrics.TagSet) {
	it.tags = tags
	it.iter++
	it.scenIter++
}

// emitData records the bytes st counted since the last call as one
// data_sent and one data_received sample, zero included, as k6 emits them
// once per iteration, setup and teardown.
func emitData(rec metrics.Recorder, st *modules.State, at time.Time, tags *metrics.TagSet) {
	if b := st.Builtin; b != nil && rec != nil {
		if tags == nil {
			tags = metrics.EmptyTags
		}
		rec.Record(metrics.Sample{Metric: b.DataSent, Tags: tags, Time: at, Value: float64(st.DataSent)})
		rec.Record(metrics.Sample{Metric: b.DataReceived, Tags: tags, Time: at, Value: float64(st.DataReceived)})
	}
	st.DataSent, st.DataReceived = 0, 0
}

// callExec calls the exec function with setup()'s data and waits for
// what it started.
func (v *vu) callExec() error {
	ret, err := v.fn(sobek.Undefined(), v.args[:]...)
	if err != nil {
		return err
	}
	p := promiseOf(ret)
	if p == nil && v.loop.pending.Load() == 0 && len(v.loop.rejected) == 0 && !v.s.scopedCalls.Load() {
		return nil
	}
	_, err = v.settle(p, ret)
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

// enterScenario switches to a scenario whose samples carry tags: its
// exec function among the script's exports, and its iteration counter.
func (it *iterationState) enterScenario(sc *executor.Scenario, tags *metrics.TagSet, exports *moduleExports) {
	if it.started {
		if it.scenIters == nil {
			it.scenIters = map[*executor.Scenario]int64{}
		}
		it.scenIters[it.scenario] = it.scenIter
	}
	it.started = true
	it.scenario = sc
	it.scenIter = it.scenIters[sc]
	it.lookupExec(exports)
	it.tags = tags
}

// lookupExec finds the current scenario's exec function among exports.
func (it *iterationState) lookupExec(exports *moduleExports) {
	exec, name := "default", "default"
	if sc := it.scenario; sc != nil {
		name = sc.Name
		if sc.Exec != "" {
			exec = sc.Exec
		}
	}
	it.fn, it.fnErr = nil, nil
	if f, ok := sobek.AssertFunction(exports.Get(exec)); ok {
		it.fn = f
	} else {
		it.fnErr = fmt.Errorf("scenario %s: the script does not export a function named %q", name, exec)
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

// setupValue is the setup() result s holds, parsed in rt once per
// runtime.
func (it *iterationState) setupValue(s *Script, rt *sobek.Runtime, j *jsonFuncs) sobek.Value {
	sd := s.setupGen.Load()
	if sd == it.setup && it.setupVal != nil {
		return it.setupVal
	}
	it.setup = sd
	it.setupVal = sobek.Undefined()
	if sd != nil && len(sd.raw) > 0 {
		if val, err := j.parse(rt, sd.raw); err == nil {
			it.setupVal = val
		} else {
			s.logf("setup() data cannot be parsed: %v", err)
		}
	}
	return it.setupVal
}

// forgetSetup drops the parsed setup data, a value of a runtime the VU
// replaces.
func (it *iterationState) forgetSetup() { it.setup, it.setupVal = nil, nil }

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

// StdJar returns the jar of the current iteration as net/http/cookiejar's,
// for Go code that takes one (k6/http.CookieJar.Jar); the iteration's end
// forgets it as it forgets any stored cookie.
func (j *vuJar) StdJar() *cookiejar.Jar {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.jar == nil {
		j.jar, _ = cookiejar.New(nil)
	}
	j.dirty = true
	return j.jar
}

func (j *vuJar) reset() {
	j.mu.Lock()
	if j.dirty {
		j.jar = nil
		j.dirty = false
	}
	j.mu.Unlock()
}
