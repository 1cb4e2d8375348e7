package k6_test

import (
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/js/jstest"
	_ "github.com/metronome-load/metronome/js/modules/k6"
	"github.com/metronome-load/metronome/metrics"
)

func TestCheck(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { check } from "k6";
export default function () {
	const a = check(200, { "is 200": (s) => s === 200, "is 404": (s) => s === 404, "truthy value": 1 }, { kind: "api" });
	const b = check("x", { "ok": true });
	console.log(a, b);
	check(1, { "throws": () => { throw new Error("inside check"); }, "after": () => true });
}`,
	}, nil)
	vu, rec := r.NewVU(t, 1)
	res := jstest.Iterate(vu)
	if res.Outcome != executor.Failed {
		t.Fatalf("outcome %v: the exception of a check did not end the iteration", res.Outcome)
	}
	out := r.Stderr.String()
	if !strings.Contains(out, "false true") || !regexp.MustCompile(`Error: inside check\n\tat throws \(file://\S+/script\.js:7:37\(\d+\)\)`).MatchString(out) {
		t.Fatalf("stderr:\n%s", out)
	}
	type want struct {
		name string
		v    float64
		kind string
	}
	wants := []want{{"is 200", 1, "api"}, {"is 404", 0, "api"}, {"truthy value", 1, "api"}, {"ok", 1, ""}, {"throws", 0, ""}}
	got := jstest.Samples(rec, r.Builtin.Checks)
	if len(got) != len(wants) {
		t.Fatalf("%d checks samples, want %d (the check after a throwing one must not run)", len(got), len(wants))
	}
	for i, w := range wants {
		tags := got[i].Tags.Map()
		if got[i].Value != w.v || tags["check"] != w.name || tags["kind"] != w.kind || tags["group"] != "" || tags["scenario"] != "default" {
			t.Errorf("sample %d: value %v tags %v, want %+v", i, got[i].Value, tags, w)
		}
		if _, ok := got[i].Tags.Get("group"); !ok {
			t.Errorf("sample %d has no group tag", i)
		}
	}
}

func TestGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := jstest.Load(t, map[string]string{
			"script.js": `
import { check, group, sleep } from "k6";
export default function () {
	const v = group("outer", () => {
		sleep(0.1);
		group("inner", () => { check(1, { "deep": () => true }); sleep(0.05); });
		return 7;
	});
	check(v, { "root": (x) => x === 7 });
}`,
		}, nil)
		vu, rec := r.NewVU(t, 1)
		if res := jstest.Iterate(vu); res.Outcome != executor.Completed {
			t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr)
		}
		checks := jstest.Samples(rec, r.Builtin.Checks)
		if len(checks) != 2 {
			t.Fatalf("%d checks", len(checks))
		}
		if g, _ := checks[0].Tags.Get("group"); g != "::outer::inner" {
			t.Fatalf("deep check's group %q", g)
		}
		if g, _ := checks[1].Tags.Get("group"); g != "" || checks[1].Value != 1 {
			t.Fatalf("root check's group %q value %v", g, checks[1].Value)
		}
		durs := jstest.Samples(rec, r.Builtin.GroupDuration)
		if len(durs) != 2 {
			t.Fatalf("%d group_duration samples", len(durs))
		}
		inner, outer := durs[0], durs[1]
		if g, _ := inner.Tags.Get("group"); g != "::outer::inner" || inner.Value != 50 {
			t.Fatalf("inner group_duration %v tags %v", inner.Value, inner.Tags)
		}
		if g, _ := outer.Tags.Get("group"); g != "::outer" || outer.Value != 150 {
			t.Fatalf("outer group_duration %v tags %v", outer.Value, outer.Tags)
		}
	})
}

func TestGroupErrors(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `
import { group } from "k6";
export default function () {
	if (__ITER === 0) group("bad::name", () => {});
	if (__ITER === 1) group("async", async () => {});
	if (__ITER === 2) group("throws", () => { throw new Error("in group"); });
}`,
	}, nil)
	vu, rec := r.NewVU(t, 1)
	for i := range 3 {
		if res := jstest.Iterate(vu); res.Outcome != executor.Failed {
			t.Fatalf("iteration %d: outcome %v", i, res.Outcome)
		}
	}
	out := r.Stderr.String()
	for _, want := range []string{"may not contain '::'", "does not support async functions", `Error: in group\n\tat file://\S+/script\.js:6:50\(\d+\)\n`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	// A group that threw still reports its duration.
	if d := jstest.Samples(rec, r.Builtin.GroupDuration); len(d) != 1 {
		t.Fatalf("%d group_duration samples", len(d))
	}
}

func TestNotInInitContext(t *testing.T) {
	for _, call := range []string{`check(1, { a: true })`, `group("g", () => {})`} {
		_, err := jstest.TryLoad(t, map[string]string{
			"script.js": "import { check, group } from \"k6\";\n" + call + ";\nexport default function () {}",
		}, nil)
		if err == nil || exitcode.Of(err) != exitcode.ScriptException ||
			!strings.Contains(err.Error(), "script.js:2:") || !strings.Contains(err.Error(), "not in the init context") {
			t.Fatalf("%s in init: %v", call, err)
		}
	}
}

func TestSleepFailRandomSeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := jstest.Load(t, map[string]string{
			"script.js": `
import { sleep, fail, randomSeed } from "k6";
export default function () {
	if (__ITER === 0) { sleep(1.25); sleep(0); sleep(-1); return; }
	if (__ITER === 1) { randomSeed(42); console.log("r", Math.random(), Math.random()); return; }
	fail("custom failure");
}`,
		}, nil)
		vu1, _ := r.NewVU(t, 1)
		vu2, _ := r.NewVU(t, 2)
		res := jstest.Iterate(vu1)
		if d := res.End.Sub(res.Start); d != 1250*time.Millisecond {
			t.Fatalf("sleep(1.25) took %v", d)
		}
		jstest.Iterate(vu2)
		jstest.Iterate(vu1)
		jstest.Iterate(vu2)
		if res := jstest.Iterate(vu1); res.Outcome != executor.Failed {
			t.Fatalf("fail(): outcome %v", res.Outcome)
		}
		var rs []string
		for _, l := range strings.Split(r.Stderr.String(), "\n") {
			if _, msg, ok := strings.Cut(l, "] r "); ok {
				rs = append(rs, msg)
			}
		}
		if len(rs) != 2 || rs[0] != rs[1] {
			t.Fatalf("randomSeed(42) gave different sequences: %q", rs)
		}
		if !regexp.MustCompile(`Error: custom failure\n\tat .*fail.* \(native\)\n\tat default \(file://\S+/script\.js:6:6\(\d+\)\)`).MatchString(r.Stderr.String()) {
			t.Fatalf("stderr:\n%s", r.Stderr)
		}
	})
}

func TestCheckTagWithoutSystemTag(t *testing.T) {
	r := jstest.Load(t, map[string]string{
		"script.js": `import { check } from "k6"; export default function () { check(1, { a: true }); }`,
	}, &jstest.Config{Options: &config.Options{SystemTags: []string{"scenario"}}})
	vu, rec := r.NewVU(t, 1)
	jstest.Iterate(vu)
	s := jstest.Samples(rec, r.Builtin.Checks)
	if len(s) != 1 || s[0].Tags != metrics.EmptyTags.With("scenario", "default") {
		t.Fatalf("samples %v", s)
	}
}
