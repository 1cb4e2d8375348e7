// Package jstest runs test scripts on the js runtime for the tests of
// modules and of the runtime itself: it writes a script's files to a
// temporary folder, loads it, makes VUs with recording recorders and runs
// iterations.
package jstest

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/internal/js"
	"github.com/metronome-load/metronome/internal/testkit/logtest"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/secrets"
)

// Config tunes Load. The zero value loads "script.js" with empty options.
type Config struct {
	// Main is the file to load, "script.js" when empty.
	Main string
	// Env is __ENV.
	Env map[string]string
	// Options are handed to Configure.
	Options *config.Options
	// Verbose lets console.debug through.
	Verbose bool
	// Progress reports a scenario's progress for exec.scenario.progress.
	Progress func(scenario string) float64
	// ModuleClient fetches remote modules (js.LoadOptions.ModuleClient).
	ModuleClient *http.Client
	// Secrets are k6/secrets' sources (js.LoadOptions.Secrets).
	Secrets *secrets.Store
}

// Runner is a loaded and configured script.
type Runner struct {
	Script   *js.Script
	Registry *metrics.Registry
	Builtin  *metrics.Builtin
	// State are the instance counters exec.instance reads.
	State *executor.State
	// Sent collects what modules send through the run's sample inlet
	// (modules.Run.Samples), from any goroutine.
	Sent *executortest.Recorder
	// Stderr collects console output and logged iteration errors.
	Stderr *Buffer
	// Dir is the folder the files were written to.
	Dir string

	mu     sync.Mutex
	aborts []string
	fails  []string
}

// Buffer is a bytes.Buffer safe for concurrent writers.
type Buffer = logtest.Buffer

// WriteFiles writes files (slash-separated name → content) into a fresh
// temporary folder and returns the folder.
func WriteFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Load writes files and loads the script, failing the test on error.
func Load(t testing.TB, files map[string]string, cfg *Config) *Runner {
	t.Helper()
	r, err := TryLoad(t, files, cfg)
	if err != nil {
		t.Fatalf("loading the script: %v", err)
	}
	return r
}

// TryLoad is Load returning the error of js.Load.
func TryLoad(t testing.TB, files map[string]string, cfg *Config) (*Runner, error) {
	t.Helper()
	if cfg == nil {
		cfg = &Config{}
	}
	main := cfg.Main
	if main == "" {
		main = "script.js"
	}
	r := &Runner{Stderr: &Buffer{}, State: &executor.State{}, Sent: &executortest.Recorder{}}
	r.Dir = WriteFiles(t, files)
	s, err := js.Load(filepath.Join(r.Dir, main), js.LoadOptions{Env: cfg.Env, Stderr: r.Stderr, Verbose: cfg.Verbose,
		ModuleClient: cfg.ModuleClient, Secrets: cfg.Secrets})
	if err != nil {
		return r, err
	}
	r.Script = s
	r.Registry = metrics.NewRegistry()
	r.Builtin = metrics.RegisterBuiltin(r.Registry)
	opts := cfg.Options
	if opts == nil {
		opts = &config.Options{}
	}
	inlet := metrics.NewInlet(func(batch []metrics.Sample) {
		for _, smp := range batch {
			r.Sent.Record(smp)
		}
	})
	if err := s.Configure(opts, r.Registry, r.Builtin, inlet); err != nil {
		return r, err
	}
	s.SetRunEnv(r.State, r.abort, r.fail, cfg.Progress)
	return r, nil
}

func (r *Runner) abort(line string) {
	r.mu.Lock()
	r.aborts = append(r.aborts, line)
	r.mu.Unlock()
}

func (r *Runner) fail(reason string) {
	r.mu.Lock()
	r.fails = append(r.fails, reason)
	r.mu.Unlock()
}

// Aborts returns the lines exec.test.abort() ended the run with, as k6
// logs them ("test aborted: reason at default (file:///…)").
func (r *Runner) Aborts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.aborts...)
}

// Fails returns the reasons exec.test.fail() was called with.
func (r *Runner) Fails() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.fails...)
}

// NewVU initialises VU id with a recording recorder.
func (r *Runner) NewVU(t testing.TB, id uint64) (executor.VU, *executortest.Recorder) {
	t.Helper()
	rec := &executortest.Recorder{}
	v, err := r.Script.NewVU(context.Background(), id, rec)
	if err != nil {
		t.Fatalf("initialising VU %d: %v", id, err)
	}
	return v, rec
}

// DefaultScenario is the scenario Iterate runs.
var DefaultScenario = &executor.Scenario{Name: "default", Executor: "per-vu-iterations", Exec: "default"}

// Iterate runs one iteration of DefaultScenario on vu.
func Iterate(vu executor.VU) executor.Result {
	return vu.Run(context.Background(), executor.Iteration{Scenario: DefaultScenario})
}

// RunCut runs one iteration of DefaultScenario on vu whose context ends
// after d, as the hard stop ends it. The iteration has an intended start
// (its start, so no lag), as in an open model, so that its requests record
// corrected_latency. The context is cancelled, not given a deadline, as
// the executors' stop cancels it: a deadline would travel with a gRPC
// call, and its server would answer DEADLINE_EXCEEDED before the context
// itself ended.
func RunCut(vu executor.VU, d time.Duration) executor.Result {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := time.AfterFunc(d, cancel)
	defer stop.Stop()
	return vu.Run(ctx, executor.Iteration{Scenario: DefaultScenario, Intended: time.Now()})
}

// Tally sums rec's samples by metric: a counter's or a rate's values, the
// number of samples of a trend or a gauge. A sample tagged with one of
// tags is counted under "metric{tag=value,...}" in the order of tags.
func Tally(rec *executortest.Recorder, tags ...string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range rec.Samples() {
		key := s.Metric.Name
		var sel []string
		for _, k := range tags {
			if v, ok := s.Tags.Get(k); ok {
				sel = append(sel, k+"="+v)
			}
		}
		if len(sel) > 0 {
			key += "{" + strings.Join(sel, ",") + "}"
		}
		if s.Metric.Type == metrics.Counter || s.Metric.Type == metrics.Rate {
			out[key] += s.Value
		} else {
			out[key]++
		}
	}
	return out
}

// Samples returns the samples of metric m in rec.
func Samples(rec *executortest.Recorder, m *metrics.Metric) []metrics.Sample {
	var out []metrics.Sample
	for _, s := range rec.Samples() {
		if s.Metric == m {
			out = append(out, s)
		}
	}
	return out
}

// Logged runs one iteration of the script in files and decodes into out
// the JSON it logged after label, failing the test when the iteration
// does not complete or nothing was logged so.
func Logged(t testing.TB, files map[string]string, label string, out any) *Runner {
	t.Helper()
	r := Load(t, files, nil)
	vu, _ := r.NewVU(t, 1)
	if res := Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	m := regexp.MustCompile(regexp.QuoteMeta(label) + ` (.*?)(?: source=console)?\n`).FindStringSubmatch(r.Stderr.String())
	if m == nil {
		t.Fatalf("no %s line: %s", label, r.Stderr)
	}
	if err := json.Unmarshal([]byte(m[1]), out); err != nil {
		t.Fatalf("%v in %s", err, m[1])
	}
	return r
}

// Probe runs the probe script testdata/<name>.js, which k6 also ran, and
// returns the results it logged after "RESULT" beside k6's recorded ones
// from testdata/<name>.k6.json. It fails the test when their numbers
// differ; how each pair must compare is the caller's.
func Probe(t testing.TB, name string) (got, want []string) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("testdata", name+".js"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", name+".k6.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	Logged(t, map[string]string{"script.js": string(script)}, "RESULT", &got)
	if len(got) != len(want) {
		t.Fatalf("%d results, k6 had %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	return got, want
}

// consoleLine matches a console message in a Runner's log.
var consoleLine = regexp.MustCompile(`(?m)^.*INFO\[\d+\] (.*) source=console$`)

// Console returns the messages the script logged with console.log, in
// the order they were logged.
func (r *Runner) Console() []string {
	var out []string
	for _, m := range consoleLine.FindAllStringSubmatch(r.Stderr.String(), -1) {
		out = append(out, m[1])
	}
	return out
}

// Recorded is one probe of a recorded k6 run: a name and what k6 printed
// for it.
type Recorded struct{ Name, Value string }

// ReadRecorded reads the probes k6 printed, one "name<sep>value" a line,
// from path, failing the test when a line has no sep.
func ReadRecorded(t testing.TB, path, sep string) []Recorded {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Recorded
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, ok := strings.Cut(l, sep)
		if !ok {
			t.Fatalf("%s: malformed expectation %q", path, l)
		}
		out = append(out, Recorded{k, v})
	}
	return out
}

// ReadTestdata reads the named files of the testdata folder into the map
// Load takes.
func ReadTestdata(t testing.TB, names ...string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	return files
}
