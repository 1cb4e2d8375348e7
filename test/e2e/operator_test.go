package e2e

import (
	"context"
	"encoding/json"
	"fmt"

	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/logtest"
)

// anyPort asks a metronome instance for its REST API on any free loopback
// port; the instance names the port it bound on stderr and
// instance.api reads it from there. A port found free beforehand can be
// taken by another test's connection before the instance binds it.
const anyPort = "127.0.0.1:0"

// announced is the line in which an instance names the port it bound.
var announced = regexp.MustCompile(`REST API listening on ([^\s"]+)`)

// instance is a metronome process started in the background.
type instance struct {
	cmd *exec.Cmd
	// stdout and stderr can be read while the process runs.
	stdout, stderr logtest.Buffer
	// exited is closed when the process has ended.
	exited chan struct{}
}

func startInstance(t *testing.T, ctx context.Context, addr string, args ...string) *instance {
	t.Helper()
	return spawn(t, ctx, nil, append([]string{"run", "-q", "--address=" + addr}, args...)...)
}

// spawn starts a metronome process with args in the background, with env
// added to the hermetic environment.
func spawn(t *testing.T, ctx context.Context, env []string, args ...string) *instance {
	t.Helper()
	statSources()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(hermeticEnv(t), env...)
	return launch(t, cmd)
}

// launch starts cmd in the background as an instance.
func launch(t *testing.T, cmd *exec.Cmd) *instance {
	t.Helper()
	in := &instance{cmd: cmd, exited: make(chan struct{})}
	in.cmd.Stdout, in.cmd.Stderr = &in.stdout, &in.stderr
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = in.cmd.Wait() // the exit code is read from ProcessState
		close(in.exited)
	}()
	return in
}

// api returns the host:port of the instance's REST API: the one it was
// given, or the one it announced when given port 0.
func (in *instance) api(t *testing.T) string {
	t.Helper()
	for _, a := range in.cmd.Args {
		if addr, ok := strings.CutPrefix(a, "--address="); ok && addr != anyPort {
			return addr
		}
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := announced.FindStringSubmatch(in.stderr.String()); m != nil {
			return m[1]
		}
		select {
		case <-in.exited:
			t.Fatalf("the instance ended without announcing its REST API\nstderr:\n%s", in.stderr.String())
		default:
		}
	}
	t.Fatalf("the instance never announced its REST API\nstderr:\n%s", in.stderr.String())
	return ""
}

// status polls GET /v1/status until it answers, as the operator's
// readiness probe does, and returns its attributes.
func (in *instance) status(t *testing.T) map[string]any {
	t.Helper()
	addr := in.api(t)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/v1/status")
		if err == nil {
			var body struct {
				Data struct{ Attributes map[string]any }
			}
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err == nil && resp.StatusCode == 200 {
				return body.Data.Attributes
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("GET /v1/status on %s never answered\nstderr:\n%s", addr, in.stderr.String())
	return nil
}

// waitPaused polls until the instance reports PausedBeforeRun (4).
func (in *instance) waitPaused(t *testing.T) {
	t.Helper()
	for range 600 {
		if st := in.status(t); st["status"] == float64(4) && st["paused"] == true {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never reached status 4 (paused before run)", in.api(t))
}

// gauges returns the gauge values GET /v1/metrics lists, polling for up to
// 5 s until vus_max is there (samples reach the API asynchronously).
func (in *instance) gauges(t *testing.T) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + in.api(t) + "/v1/metrics")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Data []struct {
				ID         string
				Attributes struct {
					Type   string
					Sample map[string]float64
				}
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range body.Data {
			if m.Attributes.Type == "gauge" {
				out[m.ID] = m.Attributes.Sample["value"]
			}
		}
		if _, ok := out["vus_max"]; ok {
			break
		}
	}
	return out
}

// patch sends what k6-operator's starter (or stopper) sends.
func (in *instance) patch(t *testing.T, attrs string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPatch, "http://"+in.api(t)+"/v1/status",
		strings.NewReader(`{"data":{"attributes":`+attrs+`,"id":"default","type":"status"}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("PATCH %s: %d", attrs, resp.StatusCode)
	}
}

func (in *instance) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-in.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("%v did not end\nstderr:\n%s", in.cmd.Args, in.stderr.String())
	}
	return in.cmd.ProcessState.ExitCode()
}

// The operator's protocol with three instances: paused runners that
// initialise and wait (not even setup() runs), are resumed one after the
// other with the starter's PATCH, and together run exactly the single
// instance's arrivals. 30/s for 2s is 61 arrivals (the period is truncated
// to whole nanoseconds, so index 60 falls just before 2s); k6 v2.2.0 runs
// 61 on one instance and 21, 20, 20 on these three, and so must we.
func TestOperatorThreeInstances(t *testing.T) {
	tg := newTarget(t)
	dir := t.TempDir()
	js := filepath.Join(dir, "op.js")
	os.WriteFile(js, []byte(`import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 30, timeUnit: '1s',
  duration: '2s', preAllocatedVUs: 6 } } };
export function setup() { http.get(__ENV.TARGET + '/setup'); }
export default function () { http.get(__ENV.TARGET); }
`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	segs := []string{"0:1/3", "1/3:2/3", "2/3:1"}
	var ins []*instance
	for i, seg := range segs {
		ins = append(ins, startInstance(t, ctx, anyPort, "--paused",
			"--execution-segment="+seg, "--execution-segment-sequence=0,1/3,2/3,1",
			"--tag", fmt.Sprintf("instance_id=%d", i+1), "-e", "TARGET="+tg.URL,
			"--summary-export", filepath.Join(dir, fmt.Sprintf("s%d.json", i+1)),
			"-o", "hdrlog="+filepath.Join(dir, fmt.Sprintf("i%d.hlog", i+1)), js))
	}
	for _, in := range ins {
		in.waitPaused(t)
	}
	// While paused, GET /v1/metrics already has the VU gauges: k6 v2.2.0
	// answered vus 0 and vus_max 2 (6 preallocated VUs in thirds) on each
	// of these instances.
	for i, in := range ins {
		got := in.gauges(t)
		if vus, ok := got["vus"]; !ok || vus != 0 || got["vus_max"] != 2 {
			t.Errorf("instance %d paused: GET /v1/metrics gauges %v, k6 answers vus 0 and vus_max 2", i+1, got)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n := tg.requests.Load(); n != 0 {
		t.Fatalf("%d requests before the start: a paused instance ran setup() or iterations", n)
	}
	for _, in := range ins {
		in.patch(t, `{"paused":false,"stopped":false}`)
	}
	var total float64
	for i, in := range ins {
		if code := in.wait(t); code != 0 {
			t.Fatalf("instance %d exited %d\nstderr:\n%s", i+1, code, in.stderr.String())
		}
		e := readExport(t, filepath.Join(dir, fmt.Sprintf("s%d.json", i+1)))
		n := e.num(t, "iterations", "count")
		if _, ok := e.Metrics["dropped_iterations"]; ok {
			n += e.num(t, "dropped_iterations", "count")
		}
		if want := []float64{21, 20, 20}[i]; n != want {
			t.Errorf("instance %d (%s): %v arrivals (iterations + dropped), want %v of the 61\nstdout:\n%s", i+1, segs[i], n, want, in.stdout.String())
		}
		total += n
	}
	if total != 61 {
		t.Errorf("instances ran %v arrivals in all, one instance runs 61", total)
	}
	if n := tg.requests.Load(); n < 3 {
		t.Errorf("%d requests: every instance runs its own setup()", n)
	}
	// The instances' HdrHistogram logs merge into one corrected_latency
	// histogram of every arrival of the single-instance schedule.
	m := metronome(t, runSpec{args: []string{"merge", "--json", "--metric", "corrected_latency",
		filepath.Join(dir, "i1.hlog"), filepath.Join(dir, "i2.hlog"), filepath.Join(dir, "i3.hlog")}})
	var merged []struct {
		Metric string  `json:"metric"`
		Count  float64 `json:"count"`
	}
	if err := json.Unmarshal([]byte(m.stdout), &merged); err != nil || len(merged) != 1 || merged[0].Count != 61 {
		t.Errorf("merged corrected_latency: %v %+v, want one histogram of 61 arrivals\n%s", err, merged, m.stdout)
	}
}

// PATCH {"stopped":true} ends a paused run with k6's exit code 103, and
// an address that is taken fails with 106 before anything runs.
func TestAPIStopAndBindFailure(t *testing.T) {
	js := script("api_stop.js")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	in := startInstance(t, ctx, anyPort, "--paused", js)
	in.waitPaused(t)

	addr := in.api(t)
	taken := startInstance(t, ctx, addr, js)
	if code := taken.wait(t); code != 106 || !strings.Contains(taken.stderr.String(), "REST API") {
		t.Errorf("second instance on %s: exit %d, want 106\nstderr:\n%s", addr, code, taken.stderr.String())
	}

	in.patch(t, `{"stopped":true}`)
	if code := in.wait(t); code != 103 {
		t.Errorf("stopped run exited %d, want 103\nstderr:\n%s", code, in.stderr.String())
	}
	if !strings.Contains(in.stderr.String(), "stopped from REST API") {
		t.Errorf("stderr does not say why:\n%s", in.stderr.String())
	}
}

// inspect --execution-requirements prints pure JSON on stdout, with the
// numbers k6 v2.2.0 prints for the same script (maxVUs 17: 10 + 4 + 3 VUs
// whose windows overlap; totalDuration 34s: the ramp's 1s + 3s + 30s).
func TestInspectExecutionRequirements(t *testing.T) {
	r := metronome(t, runSpec{args: []string{"inspect", "--execution-requirements", script("inspect.js")}})
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	var got struct {
		MaxVUs        int                        `json:"maxVUs"`
		TotalDuration string                     `json:"totalDuration"`
		Scenarios     map[string]json.RawMessage `json:"scenarios"`
		Thresholds    map[string][]string        `json:"thresholds"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if got.MaxVUs != 17 || got.TotalDuration != "34s" || len(got.Scenarios) != 3 || got.Thresholds["iterations"][0] != "count>0" {
		t.Errorf("inspect: %+v, want maxVUs 17, totalDuration 34s, 3 scenarios and the threshold", got)
	}
	if !strings.Contains(r.stderr, "init logs go to stderr") {
		t.Errorf("the init context's console output is missing from stderr:\n%s", r.stderr)
	}
	plain := metronome(t, runSpec{args: []string{"inspect", script("inspect.js")}})
	if strings.Contains(plain.stdout, "maxVUs\": 17") || !json.Valid([]byte(plain.stdout)) {
		t.Errorf("inspect without the flag:\n%s", plain.stdout)
	}
}

// archive bundles the script, its import, the file it open()s, the
// options of the command line and its -e variables; run and inspect take
// the archive where none of those files exist any more.
func TestArchiveRunsWithoutTheFiles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	for _, f := range []string{"main.js", "lib/helper.js", "lib/data.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "archive", f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(src, f)), 0o755)
		os.WriteFile(filepath.Join(src, f), b, 0o644)
	}
	tarPath := filepath.Join(dir, "a.tar")
	if r := metronome(t, runSpec{args: []string{"archive", "-u", "2", "-e", "WHO=archived", filepath.Join(src, "main.js"), "-O", tarPath}}); r.code != 0 {
		t.Fatalf("archive: exit %d\n%s", r.code, r.stderr)
	}
	if err := os.RemoveAll(src); err != nil {
		t.Fatal(err)
	}
	r := metronome(t, runSpec{args: []string{"run", "-q", "--no-summary", tarPath}})
	if r.code != 0 || strings.Count(r.stderr, "hello payload-from-file archived") != 2 {
		t.Errorf("run ARCHIVE: exit %d, want two greetings from the archived files\nstderr:\n%s", r.code, r.stderr)
	}
	in := metronome(t, runSpec{args: []string{"inspect", "--execution-requirements", tarPath}})
	var got struct {
		MaxVUs int `json:"maxVUs"`
	}
	if err := json.Unmarshal([]byte(in.stdout), &got); err != nil || got.MaxVUs != 2 {
		t.Errorf("inspect ARCHIVE: %v, maxVUs %d, want the archived -u 2\n%s", err, got.MaxVUs, in.stdout)
	}
}
