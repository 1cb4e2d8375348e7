package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// verdictScript is splitScript with names, a check, thresholds and a
// handleSummary that writes its data to $SHAPE. Even global indices are
// requests named "even", odd ones "odd". Its thresholds:
//   - iterations count<100 holds on each quarter (about 38) and fails on
//     the whole (151);
//   - corrected_latency{name:even} p(99)<150 fails everywhere: the even
//     arrivals' holds reach 196 ms (holdMs) and lag only adds to them;
//   - http_req_duration{name:odd} p(50)<5000 and http_req_failed
//     rate<0.01 hold everywhere, by far.
const verdictScript = `import http from 'k6/http';
import exec from 'k6/execution';
import { check } from 'k6';
import { Trend } from 'k6/metrics';
const excess = new Trend('excess', true);
export const options = {
  summaryTrendStats: ['min', 'max', 'p(50)', 'p(90)', 'p(99)'],
  scenarios: { s: { executor: 'constant-arrival-rate', rate: 60, timeUnit: '1s',
    duration: '2500ms', preAllocatedVUs: 40, maxVUs: 40 } },
  thresholds: {
    iterations: ['count<100'],
    'corrected_latency{name:even}': ['p(99)<150'],
    'http_req_duration{name:odd}': ['p(50)<5000'],
    http_req_failed: ['rate<0.01'],
  },
};
export default function () {
  const i = exec.scenario.iterationInTest;
  const res = http.get(__ENV.TARGET + '?i=' + i, { tags: { name: i % 2 === 0 ? 'even' : 'odd' } });
  check(res, { 'status is 200': (r) => r.status === 200 });
  excess.add(Date.now() - exec.scenario.intendedStartTime - Number(res.headers['X-Delay-Ms']));
}
export function handleSummary(data) {
  return { [__ENV.SHAPE]: JSON.stringify(data) };
}
`

// shapeOf lists the keys of a JSON value, every level down, leaving out
// the values of the leaves: the shape of handleSummary's data.
func shapeOf(v any) []string {
	var out []string
	var walk func(v any, prefix string)
	walk = func(v any, prefix string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				out = append(out, prefix+"/"+k)
				walk(x, prefix+"/"+k)
			}
		case []any:
			for i, x := range v {
				walk(x, fmt.Sprintf("%s[%d]", prefix, i))
			}
		}
	}
	walk(v, "")
	slices.Sort(out)
	return out
}

func readAny(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// k6-operator's protocol with four runners writing result files (four
// paused instances, resumed one after the other), and one instance of the
// same schedule: metronome merge of the four files gives the single
// instance's verdict — the same pass or fail on every threshold, exit code
// 99, exact counts, corrected_latency's percentiles within the measured
// lag X (see splitRuns), and handleSummary data of the same shape. The
// iterations threshold holds on every quarter and fails on the union;
// corrected_latency{name:even} is a submetric's (the quarters that run
// only odd indices pass it on an empty submetric and exit 0).
func TestOperatorMergedVerdictMatchesSingleRun(t *testing.T) {
	r := splitRunsOf(t, splitSpec{parts: 4, script: verdictScript, codes: []int{0, 99},
		extra: []string{"-o", "result={name}.result", "-e", "SHAPE={name}.shape.json"}})
	if r.codes[0] != 99 {
		t.Errorf("the single instance exited %d, want 99", r.codes[0])
	}
	file := func(name string) string { return filepath.Join(r.dir, name) }
	for k, e := range r.parts {
		if n := e.num(t, "iterations", "count"); n < 30 || n > 45 {
			t.Errorf("quarter %d ran %v iterations, want about 151/4", k+1, n)
		}
		if failed := e.thresholds(t, "iterations")["count<100"]; failed {
			t.Errorf("quarter %d: iterations count<100 failed on a quarter", k+1)
		}
	}
	if !r.single.thresholds(t, "iterations")["count<100"] {
		t.Error("iterations count<100 held on the single instance")
	}

	m := metronome(t, runSpec{args: []string{"merge", "--script", file("split.js"), "-e", "SHAPE=" + file("merged.shape.json"),
		"--summary-export", file("merged.json"), "--report", file("report.html"),
		file("i1.result"), file("i2.result"), file("i3.result"), file("i4.result")}})
	wantOneError(t, m, 99, "thresholds on metrics", "'iterations'", "'corrected_latency{name:even}'")
	merged := readExport(t, file("merged.json"))

	for _, name := range []string{"iterations", "http_req_duration{name:odd}", "corrected_latency{name:even}", "http_req_failed"} {
		one, all := r.single.thresholds(t, name), merged.thresholds(t, name)
		if fmt.Sprint(one) != fmt.Sprint(all) {
			t.Errorf("%s: thresholds failed %v on one instance, %v merged", name, one, all)
		}
	}
	for _, c := range []struct{ metric, stat string }{{"iterations", "count"}, {"http_reqs", "count"}, {"checks", "passes"}} {
		one, all := r.single.num(t, c.metric, c.stat), merged.num(t, c.metric, c.stat)
		if one != float64(splitArrivals) || all != one {
			t.Errorf("%s %s: %v on one instance, %v merged; want %d", c.metric, c.stat, one, all, splitArrivals)
		}
	}
	for _, metric := range []string{"corrected_latency", "corrected_latency{name:even}"} {
		for _, stat := range []string{"p(50)", "p(90)", "p(99)", "max"} {
			one, all := r.single.num(t, metric, stat), merged.num(t, metric, stat)
			t.Logf("%s %s: one instance %.3f ms, four merged %.3f ms (X = %.3f ms)", metric, stat, one, all, r.slack)
			if d := math.Abs(one - all); d > r.slack+hdrRes(one)+hdrRes(all) {
				t.Errorf("%s %s: one instance %.3f ms, merged %.3f ms: %.3f ms apart, more than X = %.3f ms", metric, stat, one, all, d, r.slack)
			}
		}
	}

	// The generator's health lists the reasons its intervals were
	// limited, one entry per reason that occurred: how many is the
	// machine's doing in each run, not the data's shape.
	one, all := readAny(t, file("single.shape.json")), readAny(t, file("merged.shape.json"))
	limited := func(k string) bool { return strings.HasPrefix(k, "/metronome/health/reasons[") }
	if a, b := slices.DeleteFunc(shapeOf(one), limited), slices.DeleteFunc(shapeOf(all), limited); !slices.Equal(a, b) {
		t.Errorf("handleSummary data differ in shape:\none instance %v\nmerged %v", a, b)
	}
	if html, err := os.ReadFile(file("report.html")); err != nil || !strings.Contains(string(html), "corrected") {
		t.Errorf("--report: %v", err)
	}
	// Without the script, the text summary: its per-endpoint table counts
	// every request of each name, as the single instance's would (76 even
	// global indices from 0 to 150, 75 odd ones).
	text := metronome(t, runSpec{args: []string{"merge", file("i1.result"), file("i2.result"), file("i3.result"), file("i4.result")}})
	if text.code != 99 || !regexp.MustCompile(`(?m)^\s+even\s+76\s`).MatchString(text.stdout) || !regexp.MustCompile(`(?m)^\s+odd\s+75\s`).MatchString(text.stdout) {
		t.Errorf("merge's text summary (exit %d) lacks the endpoints even (76) and odd (75):\n%s", text.code, text.stdout)
	}
}

// A runner killed in the middle of the test (kill -9) leaves a result file
// without its end line: merge merges what it holds, says which file was
// cut short, and exits 105.
func TestMergeKilledRunner(t *testing.T) {
	srv := newTarget(t)
	dir := t.TempDir()
	js := filepath.Join(dir, "t.js")
	if err := os.WriteFile(js, []byte(`import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '6s', preAllocatedVUs: 4 } } };
export default function () { http.get(__ENV.TARGET); }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var ins []*instance
	for i, seg := range []string{"0:1/2", "1/2:1"} {
		ins = append(ins, spawn(t, ctx, nil, "run", "-q", "--execution-segment="+seg, "--execution-segment-sequence=0,1/2,1",
			"--tag", fmt.Sprintf("instance_id=%d", i+1), "-e", "TARGET="+srv.URL,
			"-o", "result="+filepath.Join(dir, "{instance_id}.result"), js))
	}
	// Once the second runner has written an interval or two, it is
	// killed; the first runs to the end.
	two := filepath.Join(dir, "2.result")
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(two); err == nil && strings.Count(string(b), `{"interval"`) >= 2 {
			break
		}
	}
	if err := ins[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ins[1].wait(t)
	if code := ins[0].wait(t); code != 0 {
		t.Fatalf("runner 1 exited %d\n%s", code, ins[0].stderr.String())
	}
	m := metronome(t, runSpec{args: []string{"merge", filepath.Join(dir, "1.result"), two}})
	wantOneError(t, m, 105, "the verdict covers only what the files hold: 1 of them have no end line")
	if !strings.Contains(m.stderr, "2.result ends without its end line after") && !strings.Contains(m.stderr, "2.result is cut short without its end line") {
		t.Errorf("merge does not say which file was cut short:\n%s", m.stderr)
	}
	if !strings.Contains(m.stdout, "http_reqs") || !strings.Contains(m.stdout, "cut short") && !strings.Contains(m.stdout, "end line") {
		t.Errorf("the summary of what the files hold is missing or silent about the cut:\n%s", m.stdout)
	}
}

// A Ctrl-C as soon as handleSummary's file appears, while merge writes a
// summary of 50 MB, never leaves the file cut short: it appears whole or
// not at all, and the merge ends with 105 (hostile probe 4, #6: 3 of 3
// merges left 2-6 MB of the 52 MB, not valid JSON; merge had no signal
// handler and wrote the file in place).
func TestMergeSignalLeavesNoHalfFile(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "hs2.js")
	out := filepath.Join(dir, "hs2-out.json")
	if err := os.WriteFile(js, []byte(`export const options = { iterations: 1, vus: 1 };
export default function () {}
export function handleSummary(d) { return { [__ENV.OUT]: JSON.stringify(d), stdout: 'done\n' }; }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "huge-setup.result")
	if r := metronome(t, runSpec{args: []string{"run", "-q", "-e", "OUT=" + filepath.Join(dir, "run-out.json"), "-o", "result=" + file, js}}); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	// The end line carries 50 MB of setup data.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(raw), "\n"), "\n")
	end := lines[len(lines)-1]
	if !strings.HasPrefix(end, `{"end":{`) {
		t.Fatalf("last line %q", end)
	}
	big := `{"end":{"setupData":{"blob":"` + strings.Repeat("x", 50<<20) + `"},` + strings.TrimPrefix(end, `{"end":{`)
	lines[len(lines)-1] = big + "\n"
	if err := os.WriteFile(file, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		os.Remove(out)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		in := spawn(t, ctx, []string{"OUT=" + out}, "merge", "--script", js, "-e", "OUT="+out, file)
		signalled := false
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Microsecond) {
			if _, err := os.Stat(out); err == nil {
				_ = in.cmd.Process.Signal(os.Interrupt)
				signalled = true
				break
			}
			select {
			case <-in.exited:
				deadline = time.Time{}
			default:
			}
		}
		code := in.wait(t)
		cancel()
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("merge %d (exit %d, signalled %v) wrote no %s\n%s", i+1, code, signalled, out, in.stderr.String())
		}
		if !json.Valid(b) {
			t.Fatalf("merge %d: %s holds %d bytes that are not valid JSON: a file cut short", i+1, out, len(b))
		}
		if signalled && code != 105 && code != 0 {
			t.Errorf("merge %d: exit %d after the signal, want 105 (or 0 had it ended first)\n%s", i+1, code, in.stderr.String())
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".hs2-out.json.tmp-*")); len(left) > 0 {
			t.Errorf("merge %d left temporary files: %v", i+1, left)
		}
	}
}
