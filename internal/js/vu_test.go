package js_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/metrics"
)

func TestEnv(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
const atInit = __ENV.BASE;
export function other() {
	console.log(__ENV.BASE, __ENV.MODE, "MODE" in __ENV, __ENV.NONE === undefined);
}
export default function () {
	__ENV.ADDED = "yes";
	console.log(atInit, __ENV.BASE, "MODE" in __ENV, Object.keys(__ENV).join(","), JSON.stringify(__ENV));
}`,
	}, &jstest.Config{Env: map[string]string{"BASE": "http://x", "MODE": "global"}})
	vu, _ := r.NewVU(t, 1)
	jstest.Iterate(vu)
	sc := &executor.Scenario{Name: "s2", Exec: "other", Env: map[string]string{"MODE": "scenario"}}
	if res := vu.Run(context.Background(), executor.Iteration{Scenario: sc}); res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
	got := logged(r.Stderr.String())
	want := []string{
		`http://x http://x true ADDED,BASE,MODE {"ADDED":"yes","BASE":"http://x","MODE":"global"}`,
		`http://x scenario true true`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A VU remembers the values of __ENV it read, and what it remembers
// follows the scenario's env, the script's assignments and deletions, and
// stays right past the number of variables it remembers.
func TestEnvReadAgain(t *testing.T) {
	env := map[string]string{"BASE": "http://x", "MODE": "global"}
	var many []string
	for i := range 20 {
		k := fmt.Sprintf("V%02d", i)
		env[k] = fmt.Sprintf("value %d, long enough to be an imported string", i)
		many = append(many, "__ENV."+k)
	}
	r := jstest.Load(t, map[string]string{
		"script.js": `
let n = 0;
export function other() { console.log(__ENV.BASE, __ENV.MODE); }
export default function () {
	n++;
	const all = [` + strings.Join(many, ", ") + `].join("|");
	console.log(n, __ENV.BASE, __ENV.MODE, __ENV.V00, __ENV.V01 === undefined, all.length, all.split("|")[19]);
	if (n === 2) { __ENV.V00 = "assigned"; delete __ENV.V01; }
}`,
	}, &jstest.Config{Env: env})
	vu, _ := r.NewVU(t, 1)
	run := func(sc *executor.Scenario) {
		t.Helper()
		if res := vu.Run(context.Background(), executor.Iteration{Scenario: sc}); res.Outcome != executor.Completed {
			t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
		}
	}
	jstest.Iterate(vu)
	jstest.Iterate(vu)
	jstest.Iterate(vu)
	run(&executor.Scenario{Name: "s2", Exec: "other", Env: map[string]string{"MODE": "scenario", "BASE": "http://y"}})
	got := logged(r.Stderr.String())
	all := 0
	for i := range 20 {
		all += len(env[fmt.Sprintf("V%02d", i)]) + 1
	}
	last := env["V19"]
	want := []string{
		fmt.Sprintf("1 http://x global %s false %d %s", env["V00"], all-1, last),
		fmt.Sprintf("2 http://x global %s false %d %s", env["V00"], all-1, last),
		fmt.Sprintf("3 http://x global assigned true %d %s", all-1-len(env["V00"])+len("assigned")-len(env["V01"]), last),
		"http://y scenario",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Reading __ENV again costs no allocation: the closed loop's scripts read
// their target from it in every iteration (issue 40).
func TestEnvReadDoesNotAllocate(t *testing.T) {
	allocs := func(body string) float64 {
		r := jstest.Load(t, map[string]string{"script.js": "export default function () {" + body + "}"},
			&jstest.Config{Env: map[string]string{"TARGET": "http://127.0.0.1:8080/some/path"}})
		vu, _ := r.NewVU(t, 1)
		jstest.Iterate(vu)
		return testing.AllocsPerRun(200, func() { jstest.Iterate(vu) })
	}
	none := allocs("")
	reads := allocs(strings.Repeat("__ENV.TARGET;", 10))
	if reads > none {
		t.Fatalf("ten reads of __ENV.TARGET cost %.1f allocations per iteration, an empty iteration %.1f", reads, none)
	}
}

func TestConsole(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
export default function () {
	console.log("plain", 1, true, null, undefined);
	console.info({ a: [1, 2], b: "x" });
	console.warn("careful");
	console.error(new TypeError("bad thing"));
	console.debug("hidden unless verbose");
	console.log("two\nlines");
}`,
	}, nil)
	iterate(t, r)
	// The seconds since the start vary with the machine's speed.
	out := regexp.MustCompile(`\[\d{4}\]`).ReplaceAllString(r.Stderr.String(), "[0000]")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		`INFO[0000] plain 1 true null undefined source=console`,
		`INFO[0000] { a: [ 1, 2 ], b: "x" } source=console`,
		`WARN[0000] careful source=console`,
		`ERRO[0000] TypeError: bad thing source=console`,
		`INFO[0000] two`,
		`lines source=console`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	r = jstest.Load(t, map[string]string{
		"script.js": `export default function () { console.debug("shown"); }`,
	}, &jstest.Config{Verbose: true})
	iterate(t, r)
	if !strings.Contains(r.Stderr.String(), "] shown source=console") || !strings.HasPrefix(r.Stderr.String(), "DEBU[") {
		t.Fatalf("verbose debug output missing: %q", r.Stderr)
	}
}

func TestGlobalsVUAndIter(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
console.log("init", __VU, __ITER);
export default function () { console.log("iter", __VU, __ITER); }`,
	}, nil)
	vu, _ := r.NewVU(t, 7)
	jstest.Iterate(vu)
	jstest.Iterate(vu)
	got := logged(r.Stderr.String())
	// The first line is the service VU's init that read the options.
	want := []string{"init 0 0", "init 7 0", "iter 7 0", "iter 7 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestIterationExceptionFailsAndNextRuns(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
export default function () {
	if (__ITER === 0) {
		throw new Error("first iteration breaks");
	}
	console.log("second runs", __ITER);
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	first := jstest.Iterate(vu)
	second := jstest.Iterate(vu)
	if first.Outcome != executor.Failed || second.Outcome != executor.Completed {
		t.Fatalf("outcomes %v, %v; want Failed, Completed", first.Outcome, second.Outcome)
	}
	out := r.Stderr.String()
	// As k6 logs it: the stack, then the scenario's fields.
	stack := regexp.MustCompile(`ERRO\[0000\] Error: first iteration breaks\n\tat default \(file://\S+/script\.js:4:9\(\d+\)\)\n +executor=per-vu-iterations hint="script exception" scenario=default source=stacktrace`)
	if !stack.MatchString(out) || !strings.Contains(out, "second runs 1") {
		t.Fatalf("stderr:\n%s", out)
	}
	if first.End.Before(first.Start) || first.Tags == nil {
		t.Fatalf("bad result %+v", first)
	}
}

func TestInterruptInfiniteLoop(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
console.log("init");
export default function () {
	if (__ITER === 0) { while (true) {} }
	console.log("reused", __ITER);
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	inits := strings.Count(r.Stderr.String(), "] init ")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan executor.Result)
	go func() { done <- vu.Run(ctx, executor.Iteration{Scenario: jstest.DefaultScenario}) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case res := <-done:
		if res.Outcome != executor.Interrupted {
			t.Fatalf("outcome %v, want Interrupted", res.Outcome)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the loop was not interrupted")
	}
	// The runtime is usable again.
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("after an interruption: %v: %s", res.Outcome, r.Stderr)
	}
	if !strings.Contains(r.Stderr.String(), "reused 1") {
		t.Fatalf("stderr %s", r.Stderr)
	}
	if strings.Contains(r.Stderr.String(), "ERRO") {
		t.Fatalf("an interruption was logged as an error: %s", r.Stderr)
	}
	// A sync function's interruption leaves the runtime sound: no new
	// init context.
	if n := strings.Count(r.Stderr.String(), "] init "); n != inits {
		t.Fatalf("the VU initialised again after a sync interruption")
	}
}

func TestInterruptSleepAndTimers(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { sleep } from "k6";
export default async function () {
	if (__ITER === 0) { sleep(3600); }
	if (__ITER === 1) { await new Promise((resolve) => setTimeout(resolve, 3600 * 1000)); }
	console.log("done", __ITER);
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		start := time.Now()
		res := vu.Run(ctx, executor.Iteration{Scenario: jstest.DefaultScenario})
		cancel()
		if res.Outcome != executor.Interrupted || time.Since(start) > 10*time.Second {
			t.Fatalf("iteration %d: outcome %v after %v", i, res.Outcome, time.Since(start))
		}
	}
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed || !strings.Contains(r.Stderr.String(), "done 2") {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
}

func TestAsyncDefaultWithTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := jstest.Load(t, map[string]string{
			"script.js": `
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export default async function () {
	const order = [];
	const t0 = Date.now();
	setTimeout((a, b) => order.push("timeout " + a + b), 50, "x", "y");
	const cancelled = setTimeout(() => order.push("never"), 10);
	clearTimeout(cancelled);
	let ticks = 0;
	const id = setInterval(() => { ticks++; if (ticks === 3) clearInterval(id); }, 20);
	await wait(100);
	order.push("awaited");
	console.log(order.join(","), ticks, Date.now() - t0);
}`,
		}, nil)
		vu, _ := r.NewVU(t, 1)
		res := jstest.Iterate(vu)
		if res.Outcome != executor.Completed {
			t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
		}
		got := logged(r.Stderr.String())
		if len(got) != 1 || got[0] != "timeout xy,awaited 3 100" {
			t.Fatalf("got %q", got)
		}
		// The iteration lasted as long as its timers: 100 ms of virtual time.
		if d := res.End.Sub(res.Start); d != 100*time.Millisecond {
			t.Fatalf("iteration took %v, want 100ms", d)
		}
	})
}

func TestAsyncRejectionFails(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
export default async function () {
	await null;
	if (__ITER === 0) throw new Error("async failure");
	if (__ITER === 1) { Promise.reject(new Error("nobody handles me")); return; }
	setTimeout(() => { throw new Error("timer failure"); }, 1);
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	// As k6 v2.2.0 logs them: a rejection with its Error's stack, the
	// scenario and the executor; the timer's exception as any other.
	for i, want := range []string{
		`Uncaught \(in promise\) Error: async failure\n\tat default \(file://\S+/script\.js:4:26\(\d+\)\)\n +executor=per-vu-iterations scenario=default\n`,
		`Uncaught \(in promise\) Error: nobody handles me\n\tat default \(file://\S+/script\.js:5:37\(\d+\)\)\n +executor=per-vu-iterations scenario=default\n`,
		`Error: timer failure\n\tat file://\S+/script\.js:6:27\(\d+\)\n +executor=per-vu-iterations hint="script exception" scenario=default source=stacktrace`,
	} {
		if res := jstest.Iterate(vu); res.Outcome != executor.Failed {
			t.Fatalf("iteration %d: outcome %v", i, res.Outcome)
		}
		if !regexp.MustCompile(want).MatchString(r.Stderr.String()) {
			t.Fatalf("iteration %d: stderr lacks %q:\n%s", i, want, r.Stderr)
		}
	}
}

// TestRejectionOfAnyValueLogged checks the log line of a rejection whose
// reason is not an Error, as k6 v2.2.0 writes it for the same script:
// "Uncaught (in promise) " and the reason as text, with the executor and
// the scenario, also for an async function that throws.
func TestRejectionOfAnyValueLogged(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
export default async function () {
	if (__ITER === 0) { Promise.reject("plain reason"); return; }
	if (__ITER === 1) { await null; throw { code: 7 }; }
	await Promise.reject(42);
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	for i := 0; i < 3; i++ {
		if res := jstest.Iterate(vu); res.Outcome != executor.Failed {
			t.Fatalf("iteration %d: outcome %v", i, res.Outcome)
		}
	}
	for _, want := range []string{
		"ERRO[0000] Uncaught (in promise) plain reason executor=per-vu-iterations scenario=default\n",
		"ERRO[0000] Uncaught (in promise) [object Object] executor=per-vu-iterations scenario=default\n",
		"ERRO[0000] Uncaught (in promise) 42 executor=per-vu-iterations scenario=default\n",
	} {
		if !strings.Contains(r.Stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
}

func TestTopLevelAwait(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
const value = await new Promise((resolve) => setTimeout(() => resolve(42), 5));
export default function () { console.log("tla", value); }`,
	}, nil)
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "tla 42" {
		t.Fatalf("got %q", got)
	}
}

func TestScenarioExecTagsAndCounters(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { check } from "k6";
import exec from "k6/execution";
export function api() {
	check(true, { ok: () => true });
	console.log("api", __ITER, exec.vu.iterationInScenario, exec.scenario.name);
}
export default function () {
	console.log("default", __ITER, exec.vu.iterationInScenario, exec.scenario.name);
}`,
	}, &jstest.Config{Options: &config.Options{
		Tags:       map[string]string{"run": "r1"},
		SystemTags: []string{"scenario", "check"},
	}})
	vu, rec := r.NewVU(t, 1)
	api := &executor.Scenario{Name: "api", Exec: "api", Tags: map[string]string{"kind": "api"}}
	runs := []*executor.Scenario{jstest.DefaultScenario, api, api, jstest.DefaultScenario}
	var results []executor.Result
	for _, sc := range runs {
		results = append(results, vu.Run(context.Background(), executor.Iteration{Scenario: sc}))
	}
	got := logged(r.Stderr.String())
	want := []string{"default 0 0 default", "api 1 0 api", "api 2 1 api", "default 3 1 default"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if tags := results[1].Tags.Map(); len(tags) != 3 || tags["run"] != "r1" || tags["kind"] != "api" || tags["scenario"] != "api" {
		t.Fatalf("api iteration tags %v", tags)
	}
	// systemTags has no "group": no group tag.
	checks := jstest.Samples(rec, r.Builtin.Checks)
	if len(checks) != 2 {
		t.Fatalf("%d checks samples", len(checks))
	}
	if tags := checks[0].Tags.Map(); len(tags) != 4 || tags["check"] != "ok" || tags["scenario"] != "api" {
		t.Fatalf("check tags %v", tags)
	}
}

func TestMissingExecFunction(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `export default function () {}`}, nil)
	vu, _ := r.NewVU(t, 1)
	res := vu.Run(context.Background(), executor.Iteration{Scenario: &executor.Scenario{Name: "x", Exec: "nope"}})
	if res.Outcome != executor.Failed || !strings.Contains(r.Stderr.String(), `does not export a function named "nope"`) {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
	}
}

func TestMinIterationDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		min := duration.Duration(300 * time.Millisecond)
		r := jstest.Load(t, map[string]string{
			"script.js": `import { sleep } from "k6"; export default function () { sleep(0.1); }`,
		}, &jstest.Config{Options: &config.Options{MinIterationDuration: &min}})
		vu, _ := r.NewVU(t, 1)
		start := time.Now()
		res := jstest.Iterate(vu)
		if d := res.End.Sub(res.Start); d != 100*time.Millisecond {
			t.Fatalf("iteration measured %v, want 100ms", d)
		}
		if d := time.Since(start); d != 300*time.Millisecond {
			t.Fatalf("Run returned after %v, want 300ms", d)
		}
	})
}

// flushRecorder counts Flush calls.
type flushRecorder struct {
	samples []metrics.Sample
	flushes int
}

func (f *flushRecorder) Record(s metrics.Sample) { f.samples = append(f.samples, s) }
func (f *flushRecorder) Flush()                  { f.flushes++ }

func TestRecorderFlushedEachIteration(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `export default function () {}`}, nil)
	rec := &flushRecorder{}
	vu, err := r.Script.NewVU(context.Background(), 1, rec)
	if err != nil {
		t.Fatal(err)
	}
	jstest.Iterate(vu)
	jstest.Iterate(vu)
	if rec.flushes != 2 {
		t.Fatalf("%d flushes, want 2", rec.flushes)
	}
	if vu.Recorder() != rec || vu.ID() != 1 {
		t.Fatal("Recorder or ID is wrong")
	}
}

func TestInitContextInterruptedByContext(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `if (__VU > 0) { while (true) {} }
export default function () {}`,
	}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := r.Script.NewVU(ctx, 1, nil)
	if err == nil {
		t.Fatal("an endless init context was not interrupted")
	}
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func TestInterruptInsideAsyncFunction(t *testing.T) {
	// An interrupt inside an async function breaks a sobek runtime for
	// good; the VU must notice and evaluate its init context again, while
	// a sync interruption needs no such repair.
	r := jstest.Load(t, map[string]string{
		"script.js": `
console.log("init");
export default async function () {
	if (__ENV.MODE === "sync") { while (true) {} }
	if (__ENV.MODE === "before-await") { while (true) {} }
	if (__ENV.MODE === "after-await") { await null; while (true) {} }
	await new Promise((resolve) => setTimeout(resolve, 1));
	console.log("healthy", __ITER);
}`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	inits := func() int { return strings.Count(r.Stderr.String(), "] init ") }
	for i, mode := range []string{"before-await", "after-await", "sync"} {
		sc := &executor.Scenario{Name: mode, Env: map[string]string{"MODE": mode}}
		ctx, cancel := contextWithTimeout(20 * time.Millisecond)
		res := vu.Run(ctx, executor.Iteration{Scenario: sc})
		cancel()
		if res.Outcome != executor.Interrupted {
			t.Fatalf("%s: %v", mode, res.Outcome)
		}
		before := inits()
		if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
			t.Fatalf("after %s: %v: %s", mode, res.Outcome, r.Stderr)
		}
		if want := fmt.Sprintf("healthy %d", 2*i+1); !strings.Contains(r.Stderr.String(), want) {
			t.Fatalf("after %s: stderr lacks %q:\n%s", mode, want, r.Stderr)
		}
		// Each of these interrupts an async function, which breaks the
		// runtime: the VU initialises once more.
		if reinit := inits() - before; reinit != 1 {
			t.Fatalf("after %s the VU ran its init context %d times, want 1", mode, reinit)
		}
	}
}

func TestContextReusedAcrossIterations(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `export default function () { let s = 0; for (let i = 0; i < 1000; i++) s += i; console.log("ran", __ITER, s); }`,
	}, nil)
	vu, _ := r.NewVU(t, 1)
	it := executor.Iteration{Scenario: jstest.DefaultScenario}
	ctx, cancel := context.WithCancel(context.Background())
	for range 3 {
		if res := vu.Run(ctx, it); res.Outcome != executor.Completed {
			t.Fatalf("outcome %v", res.Outcome)
		}
	}
	// The context ends while the VU is idle: it interrupts nothing the VU
	// runs later on another context.
	cancel()
	time.Sleep(10 * time.Millisecond)
	if res := vu.Run(ctx, it); res.Outcome != executor.Interrupted {
		t.Fatalf("on the ended context: %v", res.Outcome)
	}
	other, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	if res := vu.Run(other, it); res.Outcome != executor.Completed {
		t.Fatalf("on a new context: %v: %s", res.Outcome, r.Stderr)
	}
	cancel2()
	time.Sleep(10 * time.Millisecond)
	if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
		t.Fatalf("on a background context: %v: %s", res.Outcome, r.Stderr)
	}
	if n := strings.Count(r.Stderr.String(), "ran "); n != 5 {
		t.Fatalf("%d iterations ran, want 5", n)
	}
}

// TestScenarioTagsHandedByTheEngine checks that a VU tags its iteration
// with the tag set the engine computed for the scenario, not with a set
// of its own: the two must be one value.
func TestScenarioTagsHandedByTheEngine(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": `export default function () {}`},
		&jstest.Config{Options: &config.Options{Tags: map[string]string{"run": "r1"}, SystemTags: []string{"scenario"}}})
	vu, _ := r.NewVU(t, 1)
	plain := &executor.Scenario{Name: "plain", Exec: "default", Tags: map[string]string{"kind": "k"}}
	handed := &executor.Scenario{Name: "handed", Exec: "default"}
	handed.TagSets = &executor.ScenarioTags{Iteration: metrics.NewTags(map[string]string{"from": "engine"})}

	res := vu.Run(context.Background(), executor.Iteration{Scenario: handed})
	if res.Tags != handed.TagSets.Iteration {
		t.Fatalf("iteration tags %v, want the handed set %v", res.Tags.Map(), handed.TagSets.Iteration.Map())
	}
	// Without a handed set the VU computes the same function of its options.
	res = vu.Run(context.Background(), executor.Iteration{Scenario: plain})
	want := executor.NewScenarioTags(metrics.NewTags(map[string]string{"run": "r1"}), map[string]bool{"scenario": true}, plain).Iteration
	if res.Tags != want {
		t.Fatalf("iteration tags %v, want %v", res.Tags.Map(), want.Map())
	}
}
