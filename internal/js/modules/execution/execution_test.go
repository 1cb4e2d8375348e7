package execution_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	_ "github.com/metronome-load/metronome/internal/js/modules/execution"
	"github.com/metronome-load/metronome/js/jstest"
	_ "github.com/metronome-load/metronome/js/modules/k6"
	_ "github.com/metronome-load/metronome/js/modules/metrics"
	"github.com/metronome-load/metronome/metrics"
)

// lastJSON decodes the last console line, which the scripts print as JSON.
func lastJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	_, msg, _ := strings.Cut(lines[len(lines)-1], "] ")
	msg = strings.TrimSuffix(msg, " source=console")
	var m map[string]any
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return m
}

const infoScript = `
import exec from "k6/execution";
import { scenario, vu, instance } from "k6/execution";
export default function () {
	console.log(JSON.stringify({
		name: exec.scenario.name, executor: scenario.executor, startTime: exec.scenario.startTime,
		progress: exec.scenario.progress, iterationInInstance: exec.scenario.iterationInInstance,
		iterationInTest: exec.scenario.iterationInTest, intended: exec.scenario.intendedStartTime === undefined ? "none" : exec.scenario.intendedStartTime,
		completed: instance.iterationsCompleted, interrupted: exec.instance.iterationsInterrupted,
		active: exec.instance.vusActive, initialized: exec.instance.vusInitialized,
		duration: exec.instance.currentTestRunDuration,
		idInInstance: vu.idInInstance, idInTest: exec.vu.idInTest,
		iterationInInstanceVU: vu.iterationInInstance, iterationInScenario: vu.iterationInScenario,
		scenarioKeys: Object.keys(exec.scenario).join(","),
	}));
}`

func TestExecValues(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": infoScript}, &jstest.Config{
		Progress: func(name string) float64 {
			if name == "api" {
				return 0.25
			}
			return 0
		},
	})
	// A start off the millisecond: exec.scenario.startTime is whole
	// milliseconds in k6.
	start := time.Date(2026, 3, 1, 12, 0, 0, 123_456_789, time.UTC)
	r.State.Start = start
	r.State.RunStart = start
	r.State.IterationsCompleted.Store(11)
	r.State.IterationsInterrupted.Store(2)
	r.State.VUsActive.Store(3)
	r.State.VUsInitialized.Store(4)
	sc := &executor.Scenario{Name: "api", Executor: "intended-arrival-rate", StartTime: 10 * time.Second, Exec: "default"}
	intended := start.Add(10*time.Second + 1500*time.Microsecond)
	vu, _ := r.NewVU(t, 5)
	jstest.Iterate(vu)
	res := vu.Run(context.Background(), executor.Iteration{Scenario: sc, Index: 41, LocalIndex: 13, Intended: intended})
	if res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	got := lastJSON(t, r.Stderr.String())
	startMs := float64(start.Add(10 * time.Second).UnixMilli())
	want := map[string]any{
		"name": "api", "executor": "intended-arrival-rate", "startTime": startMs, "progress": 0.25,
		"iterationInInstance": 13.0, "iterationInTest": 41.0, "intended": float64(intended.UnixNano()) / 1e6,
		"completed": 11.0, "interrupted": 2.0, "active": 3.0, "initialized": 4.0,
		"idInInstance": 5.0, "idInTest": 5.0, "iterationInInstanceVU": 1.0, "iterationInScenario": 0.0,
		"scenarioKeys": "name,executor,startTime,progress,iterationInInstance,iterationInTest,intendedStartTime",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	if d, ok := got["duration"].(float64); !ok || d < float64(time.Since(start)/time.Millisecond)-60000 {
		t.Errorf("currentTestRunDuration %v", got["duration"])
	}
	// A closed-model iteration has no intended start time.
	vu.Run(context.Background(), executor.Iteration{Scenario: sc, Index: 42})
	if got := lastJSON(t, r.Stderr.String()); got["intended"] != "none" || got["iterationInScenario"] != 1.0 {
		t.Fatalf("closed model: %v", got)
	}
}

func TestVUTags(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import exec from "k6/execution";
import { check } from "k6";
export default function () {
	if (__ITER === 0) {
		exec.vu.tags["team"] = "checkout";
		exec.vu.metrics.tags.level = 3;
	}
	check(1, { c: true });
	console.log(exec.vu.tags.team, exec.vu.tags.scenario, "team" in exec.vu.tags, Object.keys(exec.vu.tags).sort().join(","));
	if (__ITER === 1) {
		delete exec.vu.tags.level;
		exec.vu.tags.obj = {};
	}
}`,
	}, nil)
	vu, rec := r.NewVU(t, 1)
	jstest.Iterate(vu)
	res := jstest.Iterate(vu)
	if res.Outcome != executor.Failed || !strings.Contains(r.Stderr.String(), "must be a string, number or boolean") {
		t.Fatalf("setting an object tag: %v: %s", res.Outcome, r.Stderr)
	}
	if !strings.Contains(r.Stderr.String(), "checkout default true group,level,scenario,team") {
		t.Fatalf("stderr:\n%s", r.Stderr)
	}
	checks := jstest.Samples(rec, r.Builtin.Checks)
	for i, s := range checks {
		if v, _ := s.Tags.Get("team"); v != "checkout" {
			t.Fatalf("check %d lacks the VU tag: %v", i, s.Tags)
		}
		if v, _ := s.Tags.Get("level"); v != "3" {
			t.Fatalf("check %d lacks the level tag: %v", i, s.Tags)
		}
	}
	// The tags stay on the iteration's result and the next iterations.
	if v, _ := res.Tags.Get("team"); v != "checkout" {
		t.Fatalf("result tags %v", res.Tags)
	}
	if _, ok := res.Tags.Get("level"); ok {
		t.Fatalf("a deleted tag survived: %v", res.Tags)
	}
}

func TestTestAbortFailOptions(t *testing.T) {
	max := int64(5)
	r := jstest.Load(t, map[string]string{
		"script.js": `
import exec from "k6/execution";
export default function () {
	if (__ITER === 0) {
		console.log(JSON.stringify(exec.test.options));
		exec.test.fail("soft");
		console.log("still running");
		return;
	}
	exec.test.abort("hard");
	console.log("not reached");
}`,
	}, &jstest.Config{Options: &config.Options{VUs: &max, Tags: map[string]string{"a": "b"}}})
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("fail(): outcome %v: %s", res.Outcome, r.Stderr)
	}
	out := r.Stderr.String()
	// The shortcut vus: 5 shows as the scenario it makes, as in k6, and
	// the dns option as k6 shows it unset.
	if !strings.Contains(out, `{"scenarios":{"default":{"executor":"shared-iterations","iterations":5,"vus":5}},"tags":{"a":"b"},`) ||
		!strings.Contains(out, `"dns":{"ttl":null,"select":null,"policy":null}}`) || !strings.Contains(out, "still running") {
		t.Fatalf("stderr:\n%s", out)
	}
	// k6 v2.2.0 counts the iteration that aborts the test in iterations
	// (test/compat/corpus/061-exec-test-abort).
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("abort(): outcome %v, want Completed as in k6", res.Outcome)
	}
	if strings.Contains(r.Stderr.String(), "not reached") {
		t.Fatal("the iteration went on after exec.test.abort()")
	}
	// The run ends with k6's line, which names where abort() was called
	// at the program counter where sobek notices the interrupt, one past
	// the call (k6 v2.2.0 logs "…/script.js:10:17(33))" here).
	if f, a := r.Fails(), r.Aborts(); len(f) != 1 || f[0] != "test marked as failed: soft" || len(a) != 1 ||
		!regexp.MustCompile(`^test aborted: hard at default \(file:///\S+/script\.js:10:17\(33\)\)$`).MatchString(a[0]) {
		t.Fatalf("fails %q aborts %q", f, a)
	}
}

// Each exec.test.fail() logs k6 v2.2.0's line: its reason after a colon
// when one is given, an empty one too, as a string.
func TestTestFailLines(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import exec from "k6/execution";
export default function () {
	exec.test.fail();
	exec.test.fail("");
	exec.test.fail({a: 1});
	exec.test.fail(42);
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	want := []string{"test marked as failed", "test marked as failed: ", "test marked as failed: [object Object]", "test marked as failed: 42"}
	if f := r.Fails(); !slices.Equal(f, want) {
		t.Fatalf("exec.test.fail() logged %q, k6 logs %q", f, want)
	}
}

func TestInitContextAccess(t *testing.T) {
	for _, expr := range []string{"exec.scenario.name", "exec.instance.vusActive", "exec.vu.idInTest", "exec.test.options", "exec.vu.tags.x", "exec.test.abort()"} {
		_, err := jstest.TryLoad(t, map[string]string{
			"script.js": "import exec from \"k6/execution\";\nconst x = " + expr + ";\nexport default function () {}",
		}, nil)
		if err == nil || exitcode.Of(err) != exitcode.ScriptException || !strings.Contains(err.Error(), "init context") ||
			!strings.Contains(err.Error(), "script.js:2:") {
			t.Errorf("%s in init: %v", expr, err)
		}
	}
	// Importing the module and holding its objects is fine in init.
	jstest.Load(t, map[string]string{
		"script.js": "import exec, { vu } from \"k6/execution\";\nconst s = exec.scenario;\nexport default function () {}",
	}, nil)
}

func TestScenarioInSetup(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `import exec from "k6/execution";
export function setup() { return exec.vu.idInInstance + ":" + exec.scenario.name; }
export default function () {}`,
	}, nil)
	_, err := r.Script.Setup(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "not in setup() or teardown()") {
		t.Fatalf("got %v", err)
	}
}

// exec.test.options holds the scenario the shortcut options make, as k6
// v2.2.0's does: k6-utils' getCurrentStageIndex reads the stages there
// (issue 25, the jslib.k6.io sweep). In setup, exec.scenario throws a
// GoError, as in k6.
func TestTestOptionsShowShortcutScenario(t *testing.T) {
	target := int64(3)
	stages := []config.Stage{{Duration: duration.Duration(2 * time.Second), Target: &target}}
	r := jstest.Load(t, map[string]string{
		"script.js": `
import exec from "k6/execution";
export function setup() {
	try { return exec.scenario.name; } catch (e) { return e.name; }
}
export default function () {
	const sc = exec.test.options.scenarios;
	console.log(JSON.stringify([Object.keys(sc), sc.default.executor, sc.default.stages, exec.test.options.stages]));
}`,
	}, &jstest.Config{Options: &config.Options{Stages: stages}})
	data, err := r.Script.Setup(context.Background(), nil)
	if err != nil || string(data) != `"GoError"` {
		t.Fatalf("setup returned %s, %v; want the error name GoError", data, err)
	}
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	if want := `[["default"],"ramping-vus",[{"duration":"2s","target":3}],null]`; !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("stderr:\n%s\nwant %s", r.Stderr, want)
	}
}

// exec.vu.metrics.metadata, which http-instrumentation-tempo sets around
// every request, holds values that the VU's samples carry from then on
// without being tagged by them, as in k6 v2.2.0 (issue 25).
func TestVUMetricsMetadata(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import exec from "k6/execution";
import { Counter } from "k6/metrics";
const c = new Counter("traced");
export default function () {
	const md = exec.vu.metrics.metadata;
	md["trace_id"] = "abc";
	md.n = 7;
	c.add(1);
	delete md.n;
	c.add(2);
	delete md["trace_id"];
	c.add(3);
	let err = "";
	try { md.x = {}; } catch (e) { err = e.message; }
	console.log(JSON.stringify([Object.keys(exec.vu.metrics).sort(), "trace_id" in md, md.trace_id === undefined, err]));
}`,
	}, nil)
	var got []metrics.Sample
	buf := metrics.NewBuffer(func(b []metrics.Sample) { got = append(got, b...) })
	vu, err := r.Script.NewVU(context.Background(), 1, buf)
	if err != nil {
		t.Fatal(err)
	}
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	buf.Flush()
	if want := `[["metadata","tags"],false,true,"exec.vu.metrics.metadata[\"x\"]: a metadata value must be a string, number or boolean"]`; !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("stderr:\n%s\nwant %s", r.Stderr, want)
	}
	var meta []string
	for _, s := range got {
		if s.Metric.Name == "traced" {
			meta = append(meta, fmt.Sprint(s.Metadata))
		}
	}
	if want := "map[n:7 trace_id:abc] map[trace_id:abc] map[]"; strings.Join(meta, " ") != want {
		t.Fatalf("the counter's samples carry %q, want %q", meta, want)
	}
}
