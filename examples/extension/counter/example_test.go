package counter_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metronome-load/metronome/cli"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/js/jstest"

	// What the custom binary compiles in besides this package.
	_ "github.com/metronome-load/metronome/builtin"
)

// arrivals records when each VU's requests reached the server, and the
// counter value each request carried.
type arrivals struct {
	mu   sync.Mutex
	byVU map[string][]time.Time
	ns   []int
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	a.mu.Lock()
	a.byVU[r.URL.Query().Get("vu")] = append(a.byVU[r.URL.Query().Get("vu")], now)
	a.ns = append(a.ns, n)
	a.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// TestExampleEndToEnd runs example.js through metronome's command line, in
// this process, exactly as the metronome-counter binary would: the script
// imports k6/x/counter, its scenario uses the pacing-vus executor and the
// run writes -o counts=FILE.
func TestExampleEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 2-second load test against a loopback server")
	}
	const (
		vus      = 2
		interval = 200 * time.Millisecond
		dur      = 2 * time.Second
		perVU    = int(dur / interval)
		total    = vus * perVU
	)
	target := &arrivals{byVU: map[string][]time.Time{}}
	srv := httptest.NewServer(target)
	defer srv.Close()

	dir := t.TempDir()
	countsPath := filepath.Join(dir, "counts.txt")
	exportPath := filepath.Join(dir, "summary.json")
	var stdout, stderr jstest.Buffer
	root := cli.NewRoot(&stdout, &stderr)
	root.SetArgs([]string{"run", "-q", "--address", "", "--no-color",
		"-o", "counts=" + countsPath, "--summary-export", exportPath,
		"-e", "TARGET=" + srv.URL, "-e", "VUS=" + strconv.Itoa(vus),
		"-e", "INTERVAL=" + interval.String(), "-e", "DURATION=" + dur.String(),
		"example.js"})
	if err := root.Execute(); err != nil {
		t.Fatalf("run failed (exit code %d): %v\nstderr:\n%s\nstdout:\n%s", exitcode.Of(err), err, stderr.String(), stdout.String())
	}

	// The summary export: iterations, the gauge teardown recorded and the
	// threshold on it.
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
	stat := func(metric, name string) float64 {
		v, ok := export.Metrics[metric][name].(float64)
		if !ok {
			t.Errorf("%s.%s is missing from the summary export", metric, name)
		}
		return v
	}
	iterations := stat("iterations", "count")
	dropped, _ := export.Metrics["dropped_iterations"]["count"].(float64)
	// Each of the VUs has a slot every interval for dur. A slot whose VU is
	// still busy is dropped (an iteration overran it, which a loaded
	// machine can make happen); every slot ends one way or the other.
	if iterations+dropped != float64(total) || iterations < 1 {
		t.Errorf("%v iterations and %v dropped, want %d slots accounted for: each of %d VUs has one every %v for %v",
			iterations, dropped, total, vus, interval, dur)
	}

	// The module: every VU incremented one shared counter, so the values
	// the requests carried are 1…iterations, each exactly once.
	target.mu.Lock()
	ns := slices.Clone(target.ns)
	byVU := target.byVU
	target.mu.Unlock()
	slices.Sort(ns)
	want := make([]int, int(iterations))
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(ns, want) {
		t.Errorf("counter values seen by the server %v, want 1…%v once each", ns, iterations)
	}
	if !strings.Contains(stderr.String(), "requests counted by all VUs: "+strconv.Itoa(int(iterations))) {
		t.Errorf("teardown's log line is missing from stderr:\n%s", stderr.String())
	}
	if v := stat("counter_value{counter:requests}", "value"); v != iterations {
		t.Errorf("counter_value{counter:requests} = %v, want the %v iterations", v, iterations)
	}
	if th, _ := export.Metrics["counter_value{counter:requests}"]["thresholds"].(map[string]any); th["value>0"] != false {
		t.Errorf("the threshold on counter_value{counter:requests}: %v, want passed (false)", th)
	}

	// The executor: each VU kept its beat, the second one half an interval
	// behind the first: every request lies in a slot of its VU, one
	// request per slot, the slots in order. A loop without pacing would
	// send several requests in one slot within a few iterations. Real
	// time: the grid's origin is the median of the requests' offsets from
	// their nearest slots (most are on time), a request may precede its
	// slot by early (the server's clock against the runner's), and a
	// loaded machine may make one late, even into a later slot, which the
	// executor then drops, but not most of a VU's.
	if len(byVU) != vus {
		t.Fatalf("requests came from VUs %v, want %d VUs", keys(byVU), vus)
	}
	var firsts []time.Time
	for _, ts := range byVU {
		firsts = append(firsts, ts[0])
	}
	t0 := slices.MinFunc(firsts, time.Time.Compare)
	order := keys(byVU)
	sort.Slice(order, func(i, j int) bool { return byVU[order[i]][0].Before(byVU[order[j]][0]) })
	phase := func(v int, at time.Time) time.Duration { return at.Sub(t0) - time.Duration(v)*interval/vus }
	var offsets []time.Duration
	for v, vu := range order {
		for _, at := range byVU[vu] {
			p := phase(v, at)
			offsets = append(offsets, p-(p+interval/2)/interval*interval)
		}
	}
	slices.Sort(offsets)
	origin := offsets[len(offsets)/2]
	const early = 20 * time.Millisecond
	for v, vu := range order {
		ts := byVU[vu]
		if len(ts) > perVU {
			t.Errorf("VU %s sent %d requests, more than its %d slots", vu, len(ts), perVU)
		}
		prev, late := -1, 0
		for k, at := range ts {
			p := phase(v, at) - origin
			slot := int((p + early) / interval)
			if p+early < 0 || slot <= prev || slot >= perVU {
				t.Errorf("VU %s request %d arrived at %v, in no slot of its own after slot %d", vu, k, p, prev)
			}
			if p-time.Duration(slot)*interval > interval/4 {
				late++
			}
			prev = slot
		}
		if 2*late > len(ts) {
			t.Errorf("VU %s sent %d of its %d requests more than %v after their slots", vu, late, len(ts), interval/4)
		}
	}

	// The output: one "NAME COUNT" line per metric, sorted by name.
	b, err = os.ReadFile(countsPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	counts := map[string]int{}
	var names []string
	for _, l := range lines {
		name, n, ok := strings.Cut(l, " ")
		c, err := strconv.Atoi(n)
		if !ok || err != nil || name == "" {
			t.Fatalf("counts line %q is not NAME COUNT", l)
		}
		counts[name] = c
		names = append(names, name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("counts lines are not sorted by name: %v", names)
	}
	for metric, n := range map[string]int{
		"iterations":        int(iterations),
		"http_reqs":         int(iterations),
		"schedule_lag":      int(iterations), // pacing-vus gives every iteration an intended start
		"corrected_latency": int(iterations + dropped),
		"counter_value":     2, // teardown recorded two counters
	} {
		if counts[metric] != n {
			t.Errorf("counts file: %s %d, want %d", metric, counts[metric], n)
		}
	}
	for metric := range export.Metrics {
		if _, listed := counts[metric]; !strings.Contains(metric, "{") && !listed {
			t.Errorf("metric %s is in the summary but not in the counts file", metric)
		}
	}
}

func keys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// A mistake in the extensions' options reaches the user as one sentence
// naming the option, with exit code 104 (invalid configuration), before
// any load is sent.
func TestExampleMistakes(t *testing.T) {
	dir := jstest.WriteFiles(t, map[string]string{
		"bad.js": `
			export const options = { scenarios: { paced: { executor: 'pacing-vus', vus: 2, duration: '1s' } } };
			export default function () {}
		`,
		"good.js": `
			export const options = { scenarios: { paced: { executor: 'pacing-vus', interval: '1s', duration: '1s' } } };
			export default function () {}
		`,
	})
	bad, good := filepath.Join(dir, "bad.js"), filepath.Join(dir, "good.js")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{bad}, "scenarios.paced.interval: required"},
		{[]string{"--no-summary", "-o", "counts", good}, "--out counts: counts output: name the file to write"},
	} {
		var stdout, stderr jstest.Buffer
		root := cli.NewRoot(&stdout, &stderr)
		root.SetArgs(append([]string{"run", "-q", "--address", ""}, tc.args...))
		err := root.Execute()
		if err == nil || exitcode.Of(err) != exitcode.InvalidConfig || !strings.Contains(err.Error(), tc.want) ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("run %q: error %v (exit code %d), want one line with %q and exit code %d",
				tc.args, err, exitcode.Of(err), tc.want, exitcode.InvalidConfig)
		}
	}
}
