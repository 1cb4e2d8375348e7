package js_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/executortest"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/js/jstest"
)

func TestSetupDataToVUsAndTeardown(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { check } from "k6";
export async function setup() {
	await null;
	check(1, { "in setup": () => true });
	return { token: "abc", n: [1, 2], vu: __VU };
}
export default function (data) {
	data.n.push(__ITER);
	console.log("iter", data.token, JSON.stringify(data.n), data.vu);
}
export function teardown(data) {
	console.log("teardown", JSON.stringify(data), __VU);
}`,
	}, nil)
	rec := &executortest.Recorder{}
	data, err := r.Script.Setup(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"token":"abc","n":[1,2],"vu":0}` {
		t.Fatalf("setup data %s", data)
	}
	if c := jstest.Samples(rec, r.Builtin.Checks); len(c) != 1 || c[0].Tags.Map()["check"] != "in setup" {
		t.Fatalf("setup's check went astray: %v", c)
	}
	vu1, _ := r.NewVU(t, 1)
	vu2, _ := r.NewVU(t, 2)
	jstest.Iterate(vu1)
	jstest.Iterate(vu1)
	jstest.Iterate(vu2)
	if err := r.Script.Teardown(context.Background(), rec, data); err != nil {
		t.Fatal(err)
	}
	got := logged(r.Stderr.String())
	// Each VU parses the data once and keeps its own copy.
	want := []string{
		`iter abc [1,2,0] 0`,
		`iter abc [1,2,0,1] 0`,
		`iter abc [1,2,0] 0`,
		`teardown {"token":"abc","n":[1,2],"vu":0} 0`,
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNoSetupNoTeardown(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `export default function (data) { console.log(typeof data); }`,
	}, nil)
	data, err := r.Script.Setup(context.Background(), nil)
	if err != nil || data != nil {
		t.Fatalf("Setup = %s, %v", data, err)
	}
	if err := r.Script.Teardown(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "undefined" {
		t.Fatalf("got %q", got)
	}
}

func TestSetSetupData(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `export default function (data) { console.log(data.from); }`,
	}, nil)
	r.Script.SetSetupData([]byte(`{"from":"elsewhere"}`))
	if got := logged(iterate(t, r)); len(got) != 1 || got[0] != "elsewhere" {
		t.Fatalf("got %q", got)
	}
}

func TestLifecycleErrors(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import exec from "k6/execution";
export function setup() {
	if (__ENV.MODE === "abort") { exec.test.abort("no target"); }
	undefinedThing();
}
export function teardown() {
	throw new Error("teardown broke");
}
export default function () {}`,
	}, nil)
	_, err := r.Script.Setup(context.Background(), nil)
	if exitcode.Of(err) != exitcode.ScriptException || !regexp.MustCompile(`script\.js:5:\d+: ReferenceError: undefinedThing is not defined$`).MatchString(err.Error()) {
		t.Fatalf("setup error %v (code %d)", err, exitcode.Of(err))
	}
	err = r.Script.Teardown(context.Background(), nil, nil)
	if exitcode.Of(err) != exitcode.ScriptException || !strings.Contains(err.Error(), "script.js:8:8: Error: teardown broke") {
		t.Fatalf("teardown error %v", err)
	}

	r = jstest.Load(t, map[string]string{
		"script.js": `
import exec from "k6/execution";
export function setup() { exec.test.abort("no target"); console.log("not reached"); }
export default function () {}`,
	}, nil)
	_, err = r.Script.Setup(context.Background(), nil)
	if exitcode.Of(err) != exitcode.ScriptAborted || !strings.Contains(err.Error(), "no target") {
		t.Fatalf("abort in setup: %v (code %d)", err, exitcode.Of(err))
	}
	if a := r.Aborts(); len(a) != 1 || !strings.HasPrefix(a[0], "test aborted: no target at setup (file:///") {
		t.Fatalf("aborts %q", a)
	}
	if strings.Contains(r.Stderr.String(), "not reached") {
		t.Fatal("the script went on after exec.test.abort()")
	}
}

func TestSetupInterruptedByContext(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `export function setup() { while (true) {} }
export default function () {}`,
	}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := r.Script.Setup(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("got %v", err)
	}
}

func TestHandleSummary(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
export default function () {}
export function handleSummary(data) {
	const reqs = data.metrics.http_reqs.values.count;
	return {
		stdout: "requests: " + reqs + "\n",
		"report.json": JSON.stringify({ reqs: reqs, nested: data.root_group.checks[0].name }),
		"raw.bin": new Uint8Array([1, 2, 255]).buffer,
	};
}`,
	}, nil)
	data := map[string]any{
		"metrics":    map[string]any{"http_reqs": map[string]any{"type": "counter", "values": map[string]any{"count": 12}}},
		"root_group": map[string]any{"name": "", "checks": []any{map[string]any{"name": "status is 200"}}},
	}
	out, ok, err := r.Script.HandleSummary(context.Background(), data)
	if err != nil || !ok {
		t.Fatalf("HandleSummary: ok %v, %v", ok, err)
	}
	if string(out["stdout"]) != "requests: 12\n" {
		t.Fatalf("stdout %q", out["stdout"])
	}
	var rep map[string]any
	if err := json.Unmarshal(out["report.json"], &rep); err != nil || rep["reqs"] != 12.0 || rep["nested"] != "status is 200" {
		t.Fatalf("report %s (%v)", out["report.json"], err)
	}
	if string(out["raw.bin"]) != "\x01\x02\xff" {
		t.Fatalf("raw %q", out["raw.bin"])
	}

	r = jstest.Load(t, map[string]string{"script.js": `export default function () {}`}, nil)
	if out, ok, err := r.Script.HandleSummary(context.Background(), data); ok || err != nil || out != nil {
		t.Fatalf("without handleSummary: %v %v %v", out, ok, err)
	}

	r = jstest.Load(t, map[string]string{"script.js": `export default function () {}
export function handleSummary() { throw new Error("summary broke"); }`}, nil)
	if _, _, err := r.Script.HandleSummary(context.Background(), data); err == nil || !strings.Contains(err.Error(), "summary broke") {
		t.Fatalf("a throwing handleSummary: %v", err)
	}
}

// handleSummary values that are neither strings nor ArrayBuffers (nor
// Uint8Arrays) fail the whole result with the sentence k6 v2.2.0 logs,
// and so does a result that is not an object of outputs: before, an
// object was written as "[object Object]" and an array became files
// named 0 and 1.
func TestHandleSummaryRefusesOtherValues(t *testing.T) {
	for ret, want := range map[string]string{
		`{ "out-obj.txt": { a: 1 }, stdout: "ok\n" }`: "error handling summary object out-obj.txt: invalid type map[string]interface {}, it needs to be a string or ArrayBuffer",
		`{ "n.txt": 42 }`:                     "error handling summary object n.txt: invalid type int64, it needs to be a string or ArrayBuffer",
		`{ "u.txt": undefined }`:              "error handling summary object u.txt: invalid type <nil>, it needs to be a string or ArrayBuffer",
		`{ "s.txt": new String("x") }`:        "error handling summary object s.txt: invalid type map[string]interface {}, it needs to be a string or ArrayBuffer",
		`{ "i16.txt": new Int16Array([65]) }`: "error handling summary object i16.txt: invalid type []int16, it needs to be a string or ArrayBuffer",
		`["a", "b"]`:                          "handleSummary() should return a map with string keys",
		`new Map([["a", "b"]])`:               "handleSummary() should return a map with string keys",
		`"just a string"`:                     "handleSummary() should return a map with string keys",
	} {
		r := jstest.Load(t, map[string]string{"script.js": "export default function () {}\nexport function handleSummary() { return " + ret + "; }"}, nil)
		out, ok, err := r.Script.HandleSummary(context.Background(), map[string]any{})
		if err == nil || err.Error() != want || ok || out != nil {
			t.Errorf("return %s: %v, ok %v, %q; want the error %q", ret, err, ok, out, want)
		}
	}
	r := jstest.Load(t, map[string]string{"script.js": `export default function () {}
export function handleSummary() { return { "u8.txt": new Uint8Array([65, 66]), stdout: "ok" }; }`}, nil)
	if out, ok, err := r.Script.HandleSummary(context.Background(), map[string]any{}); err != nil || !ok || string(out["u8.txt"]) != "AB" {
		t.Errorf("a Uint8Array, which k6 takes: %q, %v, %v", out, ok, err)
	}
}

func TestConcurrentVUs(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { check, group } from "k6";
import { Counter } from "k6/metrics";
import lib from "./lib.js";
const c = new Counter("things");
export default function () {
	group("g", () => { check(lib.n, { "is 3": (n) => n === 3 }); c.add(1); });
}`,
		"lib.js": `module.exports = { n: 3 };`,
	}, nil)
	const vus, iters = 8, 20
	recs := make([]*executortest.Recorder, vus)
	done := make(chan error, vus)
	for i := range vus {
		recs[i] = &executortest.Recorder{}
		go func() {
			v, err := r.Script.NewVU(context.Background(), uint64(i+1), recs[i])
			if err != nil {
				done <- err
				return
			}
			for range iters {
				if res := jstest.Iterate(v); res.Outcome != executor.Completed {
					done <- context.Canceled
					return
				}
			}
			done <- nil
		}()
	}
	for range vus {
		if err := <-done; err != nil {
			t.Fatalf("%v: %s", err, r.Stderr)
		}
	}
	things := r.Registry.Get("things")
	for i, rec := range recs {
		if n := rec.Sum(things, nil); n != iters {
			t.Fatalf("VU %d counted %v things", i+1, n)
		}
		if n := rec.Sum(r.Builtin.Checks, nil); n != iters {
			t.Fatalf("VU %d passed %v checks", i+1, n)
		}
	}
}

// As k6 v2.2.0 (recorded 2026-12-01): setup() and teardown() run in
// groups of their own name, so their samples carry group ::setup and
// ::teardown and a group() inside nests under them; data_sent and
// data_received are one sample each per iteration, setup and teardown,
// zero when nothing moved, with the iteration's tags rather than those of
// the group the bytes moved in.
func TestLifecycleGroupsAndDataPerIteration(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { check, group } from "k6";
export function setup() {
	check(1, { "in setup": () => true });
	group("sg", () => { check(1, { "nested": () => true }); });
}
export default function () { group("g1", () => { check(1, { "in iter": () => true }); }); }
export function teardown() { check(1, { "in teardown": () => true }); }`,
	}, nil)
	rec := &executortest.Recorder{}
	if _, err := r.Script.Setup(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	vu, vrec := r.NewVU(t, 1)
	jstest.Iterate(vu)
	jstest.Iterate(vu)
	if err := r.Script.Teardown(context.Background(), rec, nil); err != nil {
		t.Fatal(err)
	}
	groups := map[string]string{}
	for _, s := range append(jstest.Samples(rec, r.Builtin.Checks), jstest.Samples(vrec, r.Builtin.Checks)...) {
		m := s.Tags.Map()
		groups[m["check"]] = m["group"]
	}
	want := map[string]string{"in setup": "::setup", "nested": "::setup::sg", "in iter": "::g1", "in teardown": "::teardown"}
	for c, g := range want {
		if groups[c] != g {
			t.Errorf("check %q in group %q, want %q (all: %v)", c, groups[c], g, groups)
		}
	}
	for _, m := range []struct {
		name string
		rec  *executortest.Recorder
		want []string
	}{
		{"setup and teardown", rec, []string{"::setup", "::teardown"}},
		{"iterations", vrec, []string{"", ""}},
	} {
		for _, metric := range []string{"data_sent", "data_received"} {
			var got []string
			for _, s := range jstest.Samples(m.rec, r.Registry.Get(metric)) {
				if s.Value != 0 {
					t.Errorf("%s: %s %v, want 0: nothing was sent", m.name, metric, s.Value)
				}
				got = append(got, s.Tags.Map()["group"])
			}
			if strings.Join(got, ",") != strings.Join(m.want, ",") {
				t.Errorf("%s: %s samples in groups %q, want %q", m.name, metric, got, m.want)
			}
		}
	}
}

// setup() data go to the VUs the way k6 sends them, through Go values: a
// Date as Go's RFC 3339 time, an undefined property as null
// (test/compat/corpus/099 holds k6 v2.2.0's run).
func TestSetupDataTypesAsK6(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
export function setup() { return { when: new Date(1500), skip: undefined, list: [undefined, 1] }; }
export default function () {}`,
	}, nil)
	data, err := r.Script.Setup(context.Background(), &executortest.Recorder{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"when":"` + time.UnixMilli(1500).Format(time.RFC3339Nano) + `","skip":null,"list":[null,1]}`
	if string(data) != want {
		t.Fatalf("setup data %s, want %s", data, want)
	}
}
