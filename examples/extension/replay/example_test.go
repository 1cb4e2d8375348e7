package replay_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metronome-load/metronome/cli"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/js/jstest"

	// What a custom binary compiles in besides this package.
	_ "github.com/metronome-load/metronome/builtin"
)

// hits records when each iteration's request reached the server.
type hits struct {
	mu sync.Mutex
	at map[int]time.Time
}

func (h *hits) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	i, err := strconv.Atoi(r.URL.Query().Get("i"))
	h.mu.Lock()
	if _, seen := h.at[i]; err != nil || seen {
		i = -1 - len(h.at) // a malformed or repeated index shows up as extra
	}
	h.at[i] = now
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// TestExampleEndToEnd runs example.js through metronome's command line, in
// this process, as a binary built with the replay extension would: the
// scenario replays a file of offsets against a loopback server.
func TestExampleEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 0.6-second load test against a loopback server")
	}
	offsets := []time.Duration{0, 0, 0, 100 * time.Millisecond, 200 * time.Millisecond,
		300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond}
	dir := t.TempDir()
	arrivals := filepath.Join(dir, "arrivals.txt")
	var lines []string
	for k := len(offsets) - 1; k >= 0; k-- { // out of order on purpose: the file is sorted
		lines = append(lines, strconv.FormatFloat(offsets[k].Seconds(), 'f', -1, 64))
	}
	if err := os.WriteFile(arrivals, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := &hits{at: map[int]time.Time{}}
	srv := httptest.NewServer(target)
	defer srv.Close()

	exportPath := filepath.Join(dir, "summary.json")
	var stdout, stderr jstest.Buffer
	root := cli.NewRoot(&stdout, &stderr)
	root.SetArgs([]string{"run", "-q", "--address", "", "--no-color", "--summary-export", exportPath,
		"-e", "TARGET=" + srv.URL, "-e", "ARRIVALS=" + arrivals, "-e", "MAX_VUS=2", "example.js"})
	if err := root.Execute(); err != nil {
		t.Fatalf("run failed (exit code %d): %v\nstderr:\n%s\nstdout:\n%s", exitcode.Of(err), err, stderr.String(), stdout.String())
	}

	target.mu.Lock()
	at := target.at
	target.mu.Unlock()
	var got []int
	for i := range at {
		got = append(got, i)
	}
	slices.Sort(got)
	want := make([]int, len(offsets))
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(got, want) {
		t.Fatalf("iterations seen by the server %v, want 0…%d once each", got, len(offsets)-1)
	}
	// No request may come before its offset. The first one's own delay is
	// unknown but small; 50ms covers it on a loaded machine, while a
	// replay that ignored the file would send everything within
	// milliseconds of the start, 600ms early for the last request.
	const slack = 50 * time.Millisecond
	for i, off := range offsets {
		if d := at[i].Sub(at[0]); d < off-slack {
			t.Errorf("request %d arrived %v after the first, want at least %v (its offset)", i, d, off-slack)
		}
	}

	var export struct {
		Metrics map[string]map[string]any `json:"metrics"`
	}
	b, err := os.ReadFile(exportPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &export); err != nil {
		t.Fatal(err)
	}
	n := float64(len(offsets))
	for metric, want := range map[string]float64{"iterations": n, "http_reqs": n} {
		if got, _ := export.Metrics[metric]["count"].(float64); got != want {
			t.Errorf("%s count = %v, want %v", metric, got, want)
		}
	}
	if d, _ := export.Metrics["dropped_iterations"]["count"].(float64); d != 0 {
		t.Errorf("dropped_iterations = %v, want 0 (the queue policy waits)", d)
	}
	// corrected_latency counts from the offsets: the three arrivals at 0
	// start on the two VUs maxVUs allows, so one waits for a VU at least as
	// long as a request takes, and its corrected latency is at least two
	// requests' worth.
	cl, _ := export.Metrics["corrected_latency"]["max"].(float64)
	raw, _ := export.Metrics["http_req_duration"]["min"].(float64)
	if lag, _ := export.Metrics["schedule_lag"]["max"].(float64); raw <= 0 || cl < 2*raw || lag < raw {
		t.Errorf("corrected_latency max %vms, schedule_lag max %vms, http_req_duration min %vms: want the wait for a VU counted",
			cl, lag, raw)
	}
}

// A bad line in the file reaches the user as one sentence with the option
// path and file:line, with exit code 104 (invalid configuration), before
// any load is sent.
func TestExampleBadFile(t *testing.T) {
	dir := jstest.WriteFiles(t, map[string]string{
		"arrivals.txt": "0\n12ms\n1O ms\n",
		"test.js": `
			export const options = { scenarios: { replay: { executor: 'replay-arrivals', file: __ENV.ARRIVALS } } };
			export default function () {}
		`,
	})
	file := filepath.Join(dir, "arrivals.txt")
	var stdout, stderr jstest.Buffer
	root := cli.NewRoot(&stdout, &stderr)
	root.SetArgs([]string{"run", "-q", "--address", "", "-e", "ARRIVALS=" + file, filepath.Join(dir, "test.js")})
	err := root.Execute()
	want := "scenarios.replay.file: " + file + `:3: "1O ms" is not an offset`
	if err == nil || exitcode.Of(err) != exitcode.InvalidConfig || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %v (exit code %d), want one line with %q and exit code %d", err, exitcode.Of(err), want, exitcode.InvalidConfig)
	}
}
