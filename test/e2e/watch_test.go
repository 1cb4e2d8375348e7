package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/promtest"
)

// liveScript is 40 arrivals/s for 20 s against the hold server, every
// fifth request a bad one (400), with three abortOnFail thresholds:
// iterations count<100, which the union of four instances crosses after
// 2.5 s and each instance alone only after 10 s; corrected_latency
// p(99)<5000 and http_req_failed rate<0.5, which hold.
const liveScript = `import http from 'k6/http';
import exec from 'k6/execution';
export const options = {
  summaryTrendStats: ['min', 'med', 'max', 'p(98)', 'p(99)'],
  scenarios: { s: { executor: 'constant-arrival-rate', rate: 40, timeUnit: '1s', duration: '20s', preAllocatedVUs: 40 } },
  thresholds: {
    iterations: [{ threshold: 'count<100', abortOnFail: true }],
    corrected_latency: [{ threshold: 'p(99)<5000', abortOnFail: true }],
    http_req_failed: [{ threshold: 'rate<0.5', abortOnFail: true }],
  },
};
export default function () {
  const i = exec.scenario.iterationInTest;
  http.get(__ENV.TARGET + '?i=' + (i % 5 === 0 ? 'bad' : i));
}
`

// Live abortOnFail across instances, against a real Prometheus: four
// paused runners push native histograms and counters, metronome watch
// evaluates the script's abortOnFail thresholds on their union and stops
// every runner through its REST API once iterations count<100 is crossed
// on the union — long before any runner would have crossed it alone. At
// the end, the watch's p(99) of the union, from the summed native
// histograms, lies within a bucket of the exact merge of the runners'
// result files.
func TestWatchStopsEveryRunnerOnTheUnion(t *testing.T) {
	prom := promtest.Start(t)
	srv := newHoldServer(t)
	dir := t.TempDir()
	js := filepath.Join(dir, "live.js")
	if err := os.WriteFile(js, []byte(liveScript), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	env := []string{
		"K6_PROMETHEUS_RW_SERVER_URL=" + prom.WriteURL(),
		"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true",
		"K6_PROMETHEUS_RW_PUSH_INTERVAL=1s",
	}
	var ins []*instance
	var runners []string
	for i := 1; i <= 4; i++ {
		ins = append(ins, spawn(t, ctx, env, "run", "-q", "--address="+anyPort, "--paused",
			fmt.Sprintf("--execution-segment=%d/4:%d/4", i-1, i), "--execution-segment-sequence=0,1/4,2/4,3/4,1",
			"--tag", fmt.Sprintf("instance_id=%d", i), "--tag", "testrun_name=live",
			"-e", "TARGET="+srv.URL+"/live", "-o", "experimental-prometheus-rw",
			"-o", "result="+filepath.Join(dir, "{instance_id}.result"),
			"--summary-export", filepath.Join(dir, fmt.Sprintf("%d.json", i)), js))
	}
	for _, in := range ins {
		in.waitPaused(t)
		runners = append(runners, "--runner", "http://"+in.api(t))
	}
	var wout, werr bytes.Buffer
	w := exec.CommandContext(ctx, binary, append(append([]string{"watch", "--prometheus", prom.URL,
		"--select", `testrun_name="live"`, "--interval", "500ms"}, runners...), js)...)
	w.Env, w.Stdout, w.Stderr = hermeticEnv(t), &wout, &werr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	for _, in := range ins {
		in.patch(t, `{"paused":false,"stopped":false}`)
	}
	for i, in := range ins {
		if code := in.wait(t); code != 103 {
			t.Errorf("runner %d exited %d, want 103 (stopped through its REST API)\n%s", i+1, code, in.stderr.String())
		}
	}
	ran := time.Since(started)
	werrc := w.Wait()
	code := 0
	if ee, ok := werrc.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 99 || !strings.Contains(werr.String(), "thresholds iterations: count<100 were crossed on the union of 4 runners") {
		t.Fatalf("watch exited %d (%v)\nstdout:\n%s\nstderr:\n%s", code, werrc, wout.String(), werr.String())
	}
	t.Logf("stopped after %s\n%s", ran, wout.String())

	// No runner crossed the threshold alone; together they did.
	total := 0.0
	for i := 1; i <= 4; i++ {
		n := readExport(t, filepath.Join(dir, fmt.Sprintf("%d.json", i))).num(t, "iterations", "count")
		if n >= 100 {
			t.Errorf("runner %d ran %v iterations: it crossed count<100 alone", i, n)
		}
		total += n
	}
	if total < 100 || ran > 15*time.Second {
		t.Errorf("the runners ran %v iterations together in %s; want at least 100, stopped well before 20 s", total, ran)
	}

	// The watch's last p(99) of the union against the exact merge of the
	// same samples: PromQL interpolates in the schema-3 bucket (bounds a
	// factor w = 2^(1/8) apart) of the value of rank ⌈0.99·n⌉, which lies
	// between the merge's p(98) and its max.
	m := metronome(t, runSpec{args: []string{"merge", "--summary-export", filepath.Join(dir, "merged.json"),
		filepath.Join(dir, "1.result"), filepath.Join(dir, "2.result"), filepath.Join(dir, "3.result"), filepath.Join(dir, "4.result")}})
	wantOneError(t, m, 99, "'iterations'")
	merged := readExport(t, filepath.Join(dir, "merged.json"))
	if n := merged.num(t, "iterations", "count"); n != total {
		t.Errorf("merged iterations %v, the runners' sum %v", n, total)
	}
	got := regexp.MustCompile(`at the end: corrected_latency: p\(99\)<5000 → ([0-9.e+]+)`).FindStringSubmatch(wout.String())
	if got == nil {
		t.Fatalf("the watch printed no final p(99):\n%s", wout.String())
	}
	live, _ := strconv.ParseFloat(got[1], 64)
	// The union's failure rate, from each series' ratio weighed by its
	// requests, is the merge's exactly.
	failed := regexp.MustCompile(`at the end: http_req_failed: rate<0.5 → ([0-9.e+-]+)`).FindStringSubmatch(wout.String())
	if failed == nil {
		t.Fatalf("the watch printed no final http_req_failed rate:\n%s", wout.String())
	}
	if rate, _ := strconv.ParseFloat(failed[1], 64); math.Abs(rate-merged.num(t, "http_req_failed", "value")) > 1e-5 || rate < 0.15 {
		t.Errorf("http_req_failed: the watch's %v, the merge's %v (about 0.2 of the requests were bad)", rate, merged.num(t, "http_req_failed", "value"))
	}
	w8 := math.Exp2(1.0 / 8)
	lo, hi := merged.num(t, "corrected_latency", "p(98)"), merged.num(t, "corrected_latency", "max")
	t.Logf("p(99): live %.3f ms; merged p(98) %.3f, p(99) %.3f, max %.3f ms", live, lo, merged.num(t, "corrected_latency", "p(99)"), hi)
	if live < lo/w8 || live > hi*w8 {
		t.Errorf("the union's live p(99) %.3f ms is outside [p(98)/w, max·w] = [%.3f, %.3f] of the exact merge", live, lo/w8, hi*w8)
	}
}
