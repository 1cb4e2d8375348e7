// Package js runs k6-style test scripts on the sobek JavaScript engine. It
// is the runtime layer; the compile layer is internal/js/compile
// (docs/js-layers.md).
//
// Load has internal/js/compile read, transform (TypeScript, syntax sobek
// lacks) and link the script's modules once per test; every VU is then a fresh
// runtime that evaluates the linked modules (its init context) and runs
// iterations on its own goroutine. ES modules whose meaning allows it run
// as plain functions rather than through sobek's module machinery, which
// would cost every runtime about 20 KB more (compile/esmscript.go).
// Built-in and extension modules ("k6", "k6/http", "k6/x/...") are Go code
// found through modules.Lookup.
package js

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/dialer"
	"github.com/metronome-load/metronome/internal/js/compile"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/ratelimit"
	"github.com/metronome-load/metronome/secrets"
)

// LoadOptions configure Load.
type LoadOptions struct {
	// Env is __ENV: the process environment merged with -e values.
	Env map[string]string
	// Stderr receives console output and iteration errors.
	Stderr io.Writer
	// Logf reports warnings and iteration errors; when nil they go to
	// Log. Whatever it writes to must hide Secrets.
	Logf func(format string, args ...any)
	// Log is where console output, warnings and iteration errors go
	// (--log-output, --log-format); nil means text lines to Stderr
	// through Secrets.Writer. A Log given must hide Secrets itself
	// (logsink.New's through).
	Log *logsink.Sink
	// Verbose lets console.debug through, as k6's --verbose does.
	Verbose bool
	// ModuleClient fetches https:// modules; nil means a
	// client with the system's certificate pool and a 60 s timeout. Tests
	// pass an httptest TLS server's client.
	ModuleClient *http.Client
	// Files, when not nil, holds every local file the script may read
	// (the main script, its imports, what it open()s), by absolute
	// slash-separated path: a script from an archive reads nothing from
	// disk.
	Files map[string][]byte
	// Secrets are the --secret-source stores k6/secrets reads; every value
	// a script fetched is hidden from what the run writes.
	Secrets *secrets.Store
	// LookupEnv looks a variable up in metronome's process environment
	// for modules (modules.Run.LookupEnv); nil means os.LookupEnv.
	LookupEnv func(key string) (string, bool)
}

// Script is a loaded, linked test script. It implements engine.Script.
// It is safe for concurrent use: VUs are made and run on many goroutines.
type Script struct {
	path   string // absolute path of the main script
	dir    string
	cwd    string // for displaying paths
	opts   LoadOptions
	start  time.Time
	loader *compile.Loader
	main   *compile.Module

	options  json.RawMessage
	exported map[string]bool // exported names → whether a function

	shared sharedStore
	// equipment is the part of modules.Run that does not depend on the
	// options: the log and the environment.
	equipment modules.Run

	// vus maps a runtime to its VU while its init context runs, so that
	// shared module records can find the VU evaluating them.
	vus sync.Map
	// scopedCalls is set once a VU instantiated a modules.CallScoped
	// module: every call after init then has a context of its own
	// (vu.scopeCall).
	scopedCalls atomic.Bool

	mu       sync.RWMutex
	conf     *runConfig
	run      runHooks
	setupGen atomic.Pointer[setupData]
}

// runConfig is what Configure derives from the consolidated options.
type runConfig struct {
	opts        *config.Options
	registry    *metrics.Registry
	builtin     *metrics.Builtin
	initEnv     *modules.InitEnv
	run         *modules.Run
	systemTags  map[string]bool
	groupTag    bool // the group system tag is enabled
	runTags     *metrics.TagSet
	noCookies   bool
	rps         *ratelimit.Limiter // shared by every VU, as k6's is
	minIterDur  time.Duration
	rootTags    *metrics.TagSet // run tags plus group "" for setup and teardown
	scenarioTag sync.Map        // *executor.Scenario → *metrics.TagSet
	// tuple is the instance's execution segment, which numbers its VUs
	// in the test (exec.vu.idInTest); nil for the whole test.
	tuple *segment.Tuple
	// latencyTrends are the metrics options.latencyTrends names, looked
	// up once the init context has defined them (a VU's first code
	// outside it); nil without the option, and VUs then hand their
	// modules their own recorder, unwrapped.
	latencyTrends func() []*metrics.Metric
	// inlets are the VUs' modules.VUInlet, made when a module first asks
	// (vu.Inlet); inletsUsed is set from then on, so that the VUs of a
	// run without one pay a load per call and nothing else.
	inlets     sync.Map // *vu → *modules.VUInlet
	inletsUsed atomic.Bool
}

// idInTest is the test-wide number of the instance's VU id: the id-th
// global VU number of the instance's stripe, as k6 numbers them.
func (c *runConfig) idInTest(id uint64) uint64 {
	if id == 0 || c.tuple == nil {
		return id
	}
	return uint64(c.tuple.Global(int64(id-1))) + 1
}

// runHooks connect VUs to the test run (k6/execution).
type runHooks struct {
	exec     *executor.State
	abort    func(reason string)
	fail     func(reason string)
	progress func(scenario string) float64
}

// setupData is setup()'s result as JSON; VUs parse it once each.
type setupData struct{ raw []byte }

// Load reads the script at path with everything it imports, links it and
// evaluates its init context once, in a service VU, to read its options.
// Every mistake in the script is an exitcode.Error with code 107 whose
// message names the file and line.
func Load(path string, opts LoadOptions) (*Script, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.ScriptException, "script %s: %v", path, err)
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.Log == nil {
		opts.Log = logsink.NewText(opts.Secrets.Writer(opts.Stderr))
	}
	cwd, _ := os.Getwd()
	s := &Script{
		path:  abs,
		dir:   filepath.Dir(abs),
		cwd:   cwd,
		opts:  opts,
		start: time.Now(),
	}
	s.shared.items = map[string]*sharedItem{}
	s.equipment = modules.Run{Log: opts.Log.Slog(slog.LevelInfo), LookupEnv: opts.LookupEnv}
	if opts.Verbose {
		s.equipment.Log = opts.Log.Slog(slog.LevelDebug)
	}
	if s.equipment.LookupEnv == nil {
		s.equipment.LookupEnv = os.LookupEnv
	}
	if opts.Files != nil {
		abs = path
		s.path, s.dir = path, filepath.Dir(path)
		if _, ok := opts.Files[filepath.ToSlash(path)]; !ok {
			return nil, exitcode.Errorf(exitcode.ScriptException, "the archive does not hold its script %s", path)
		}
	} else if st, err := os.Stat(abs); err != nil || st.IsDir() {
		// k6 exits 255 for a script it cannot read.
		return nil, loggedError(exitcode.Errorf(exitcode.Generic, "script %s does not exist or is not a file", path))
	}
	s.loader = compile.New(compile.Config{Dir: s.dir, ModuleClient: opts.ModuleClient, Files: opts.Files,
		Warn: func(msg string) { s.logf("%s", msg) }}, moduleHost{s})
	main, err := s.loader.LoadMain(compile.FileURL(abs))
	if err != nil {
		return nil, s.loadError(path, abs, err)
	}
	s.main = main
	if main.ESM() != nil {
		if err := main.ESM().Link(); err != nil {
			return nil, s.loadError(path, abs, err)
		}
		main.SetLinked()
	}
	reg := metrics.NewRegistry()
	s.conf = s.newRunConfig(&config.Options{}, reg, metrics.RegisterBuiltin(reg), nil)

	v, err := s.newVU(context.Background(), 0, discard{})
	if err != nil {
		return nil, err
	}
	if err := s.readExports(v); err != nil {
		return nil, err
	}
	return s, nil
}

// readExports records the exported names and the options of the script
// from the service VU v.
func (s *Script) readExports(v *vu) error {
	s.exported = map[string]bool{}
	callable := false
	for _, k := range v.exports.Keys() {
		_, isFn := sobek.AssertFunction(v.exports.Get(k))
		s.exported[k] = isFn
		callable = callable || isFn && k != "options"
	}
	if !callable {
		// k6's words and exit code: a script with nothing to run is
		// refused before its options are read.
		return exitcode.Errorf(exitcode.Generic, "%s: no exported functions in script; export a default function or the functions scenarios name in exec",
			s.display(s.main.Key()))
	}
	o := v.exports.Get("options")
	if o == nil || sobek.IsUndefined(o) || sobek.IsNull(o) {
		return nil
	}
	raw, err := v.json.stringify(v.rt, o)
	if err != nil {
		return exitcode.Errorf(exitcode.ScriptException, "%s: the exported options cannot be turned into JSON: %s",
			s.display(s.path), s.describe(err))
	}
	s.options = json.RawMessage(raw)
	return nil
}

// Options returns the script's exported options as JSON, nil when it
// exports none.
func (s *Script) Options() json.RawMessage { return s.options }

// LocalFiles returns the local files the script read while it loaded and
// ran its init context once (the main script, its imports, the files it
// open()ed), by absolute slash-separated path: what an archive must hold.
func (s *Script) LocalFiles() map[string][]byte { return s.loader.LocalFiles() }

// Exports reports whether the script exports a function called name.
func (s *Script) Exports(name string) bool { return s.exported[name] }

// Capabilities reports what the script offers the run: the lifecycle
// and exec functions it exports, and the hooks that connect its VUs to
// the run (SetRunEnv, SetSetupData).
func (s *Script) Capabilities() executor.Capabilities {
	fns := make([]string, 0, len(s.exported))
	for name, isFn := range s.exported {
		if isFn {
			fns = append(fns, name)
		}
	}
	sort.Strings(fns)
	return executor.Capabilities{
		Setup:         s.exported["setup"],
		Teardown:      s.exported["teardown"],
		HandleSummary: s.exported["handleSummary"],
		Functions:     fns,
		ConnectRun:    s.SetRunEnv,
		SetSetupData:  s.SetSetupData,
	}
}

// Configure hands the consolidated options, the run's metric registry and
// its sample inlet to the script. VUs made afterwards record into that
// registry's metrics; modules send samples from other goroutines through
// the inlet (nil: none).
func (s *Script) Configure(opts *config.Options, reg *metrics.Registry, b *metrics.Builtin, in *metrics.Inlet) error {
	if opts == nil {
		opts = &config.Options{}
	}
	if reg == nil {
		reg = metrics.NewRegistry()
	}
	if b == nil {
		b = metrics.RegisterBuiltin(reg)
	}
	c := s.newRunConfig(opts, reg, b, in)
	s.mu.Lock()
	s.conf = c
	s.mu.Unlock()
	return nil
}

func (s *Script) newRunConfig(opts *config.Options, reg *metrics.Registry, b *metrics.Builtin, in *metrics.Inlet) *runConfig {
	c := &runConfig{opts: opts, registry: reg, builtin: b}
	// A bad segment is reported by config.Scenarios before any VU exists.
	c.tuple, _ = opts.ExecutionTuple()
	c.run = s.newRun(opts, in)
	c.initEnv = &modules.InitEnv{Registry: reg, CWD: s.dir, Shared: &modules.Shared{Get: s.shared.get}, Logf: s.logf, Secrets: s.opts.Secrets, Run: c.run}
	c.systemTags = map[string]bool{}
	tags := opts.SystemTags
	if tags == nil {
		tags = config.DefaultSystemTags
	}
	for _, t := range tags {
		c.systemTags[t] = true
	}
	c.groupTag = c.systemTags["group"]
	c.runTags = metrics.NewTags(opts.Tags)
	c.rootTags = c.runTags
	if c.groupTag {
		c.rootTags = c.rootTags.With("group", "")
	}
	c.noCookies = opts.NoCookiesReset != nil && *opts.NoCookiesReset
	if opts.RPS != nil {
		c.rps = ratelimit.New(*opts.RPS)
	}
	if opts.MinIterationDuration != nil {
		c.minIterDur = opts.MinIterationDuration.Std()
	}
	if names := opts.LatencyTrends; len(names) > 0 {
		// The engine refuses a run whose names do not resolve, before
		// any VU runs code; what resolves is all a VU can use.
		c.latencyTrends = sync.OnceValue(func() []*metrics.Metric {
			trends, _ := executor.ResolveLatencyTrends(reg, names)
			return trends
		})
	}
	return c
}

// newRun makes what the run's VUs share under opts: the network fence and
// TLS configuration of their connections, and the sample inlet in.
func (s *Script) newRun(opts *config.Options, in *metrics.Inlet) *modules.Run {
	r := s.equipment
	fence := dialer.New(net.Dialer{}, opts.BlacklistIPs, opts.BlockHostnames, opts.Hosts)
	network := opts.Network()
	r.Dialer = func(vu uint64) modules.Dialer { return fence.ForVU(network, vu) }
	r.TLSConfig = opts.TLSConfig()
	r.Samples = in
	return &r
}

func (s *Script) config() *runConfig {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.conf
}

// SetRunEnv connects the script's VUs to the test run: exec holds the
// instance-wide counters of k6/execution's exec.instance, abort and fail
// implement exec.test.abort() and exec.test.fail(), and progress reports a
// scenario's progress (0–1) for exec.scenario.progress. Any may be nil.
// The engine calls it before it makes VUs.
func (s *Script) SetRunEnv(exec *executor.State, abort, fail func(reason string), progress func(scenario string) float64) {
	s.mu.Lock()
	s.run = runHooks{exec: exec, abort: abort, fail: fail, progress: progress}
	s.mu.Unlock()
}

func (s *Script) hooks() runHooks {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.run
}

// SetSetupData hands setup()'s JSON result to the VUs, which parse it once
// each and pass it to every exec function. Setup calls it itself; the
// engine calls it when the data come from elsewhere.
func (s *Script) SetSetupData(data []byte) {
	s.setupGen.Store(&setupData{raw: data})
}

// NewVU initialises VU number id: a fresh runtime that evaluated the init
// context. Its samples go to rec.
func (s *Script) NewVU(ctx context.Context, id uint64, rec metrics.Recorder) (executor.VU, error) {
	v, err := s.newVU(ctx, id, rec)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// logf reports a warning or an error.
func (s *Script) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
		return
	}
	s.writeLine(logsink.Warn, fmt.Sprintf(format, args...), "")
}

// logIterationError reports the error an iteration of sc ended with. An
// exception is logged as k6 logs it: its stack as the message, with the
// scenario, its executor, hint="script exception" and source=stacktrace.
// A rejected promise is logged as "Uncaught (in promise)" and its reason
// (an Error's stack), with the scenario and the executor, as k6 logs it.
func (s *Script) logIterationError(err error, sc *executor.Scenario) {
	var ex *sobek.Exception
	var te *thrownError
	switch {
	case sc == nil || s.opts.Logf != nil:
		s.logError(s.describe(err))
	case errors.As(err, &ex):
		s.equipment.Log.Error(s.stackText(ex), exceptionAttrs("executor", sc.Executor, "scenario", sc.Name)...)
	case errors.As(err, &te):
		s.equipment.Log.Error(s.rejectionText(te.val), "executor", sc.Executor, "scenario", sc.Name)
	default:
		s.logError(s.describe(err))
	}
}

// logError reports an error of an iteration.
func (s *Script) logError(msg string) {
	if s.opts.Logf != nil {
		s.opts.Logf("%s", msg)
		return
	}
	s.writeLine(logsink.Error, msg, "")
}

// writeLine writes one log line to the log sink, which masks the secrets
// the script fetched, as k6 does.
func (s *Script) writeLine(level logsink.Level, msg, source string) {
	s.opts.Log.Line(level, msg, source)
}

// discard is the recorder of the service VU that reads the options.
type discard struct{}

func (discard) Record(metrics.Sample) {}

// errAborted is the interrupt value of exec.test.abort().
type errAborted struct{ reason string }

func (e *errAborted) Error() string {
	if e.reason == "" {
		return "test aborted"
	}
	return "test aborted: " + e.reason
}

// errInterrupted is the interrupt value used when a VU's context ends.
var errInterrupted = errors.New("iteration interrupted")
