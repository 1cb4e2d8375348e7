package e2e

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A script with a windowed threshold runs unchanged in stock k6: k6 v2.2.0
// accepts the window key without a word, drops it (k6 inspect shows the
// threshold as the bare string) and judges the whole run, where five
// requests pass count>=5 (exit 0; recorded 2026-12-01). metronome judges
// every one-second window: those after the burst hold no request, so it
// exits 99 and names them.
func TestWindowedThresholdInStockK6(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	eachRunner(t, func(t *testing.T, rn runner) {
		exp := filepath.Join(t.TempDir(), "export.json")
		r := rn.run(t, runSpec{args: []string{"run", "-e", "TARGET=" + tg.URL, "--summary-export", exp, script("windows/stock.js")}})
		b, err := os.ReadFile(exp)
		if err != nil {
			t.Fatalf("%s wrote no export: %v", rn.name, err)
		}
		var e export
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		failed := e.Metrics["http_reqs"]["thresholds"].(map[string]any)["count>=5"]
		switch rn.name {
		case "k6":
			if r.code != 0 || failed != false || !strings.Contains(r.stdout, "✓ 'count>=5' count=5") {
				t.Errorf("k6 exited %d with the threshold failed=%v; want k6 v2.2.0's whole-run pass\n%s", r.code, failed, r.stdout)
			}
			in := rn.run(t, runSpec{args: []string{"inspect", script("windows/stock.js")}})
			var opts struct {
				Thresholds map[string][]any `json:"thresholds"`
			}
			if err := json.Unmarshal([]byte(in.stdout), &opts); err != nil {
				t.Fatalf("k6 inspect: %v\n%s", err, in.stdout)
			}
			if th := opts.Thresholds["http_reqs"]; len(th) != 1 || th[0] != "count>=5" {
				t.Errorf("k6 inspect shows the threshold as %v, want the bare expression", th)
			}
		default:
			if r.code != 99 || failed != true {
				t.Errorf("metronome exited %d with the threshold failed=%v; want 99 and true\n%s\n%s", r.code, failed, r.stdout, r.stderr)
			}
			// The run lasts about 3 s: the windows from 1 s on are empty.
			l := lineStarting(t, r.stdout, "    ✗ 'count>=5' count=0 in the worst 1s window (1s–2s); ")
			if !strings.Contains(l, " windows failed: 1s–") {
				t.Errorf("windowed line %q", l)
			}
		}
	})
}

// lineStarting returns the first line of text that starts with prefix.
func lineStarting(t *testing.T, text, prefix string) string {
	t.Helper()
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimRight(l, "\n")
		}
	}
	t.Fatalf("no line starts with %q in:\n%s", prefix, text)
	return ""
}

// tailServer is a loopback server that answers most requests at once and
// one in ten after tail to 1.5·tail, evenly spread: its p99 lies in that
// tail, about 1.45·tail, plus the machine's timer jitter. Which
// requests are slow, and how slow, is drawn from a seeded source, the same
// for every server.
func tailServer(t *testing.T, tail time.Duration) string {
	t.Helper()
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		slow, f := rng.IntN(10) == 0, 1+rng.Float64()/2
		mu.Unlock()
		if slow {
			time.Sleep(time.Duration(float64(tail) * f))
		}
		_, _ = w.Write([]byte("ok\n"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Real runs through the binary, in real time: two runs of the same
// healthy loopback server are judged no regression (exit 0), and a run of
// the server made 20% slower at p99 (its tail of 1–1.5 s made 1.2–1.8 s) a
// regression (exit 99), from their hdrlogs of 250 ms intervals. The
// servers draw the same slow requests, so the two healthy runs differ only
// by the timer and scheduling jitter of the machine; the slower server
// adds 20% of the p99 of 1.45 s, 290 ms. The tolerance is half of that,
// 10% (145 ms), so that jitter has the same room on either side: the
// healthy runs may differ by up to 145 ms, and the slower one stays
// 145 ms past the tolerance. compare's default 5% (72 ms) left jitter less
// than the 80 ms seen between two runs on this 2-core machine at a load
// average of 8. The p99 rests on the 180 slow requests of a run, enough
// for the interval to leave zero well out (measured: two healthy runs
// within ±57 ms, the slower one's interval from +87 ms).
func TestCompareRuns(t *testing.T) {
	// Not parallel: the runs' 300 requests a second would disturb the
	// other real-time tests, and they it.
	if testing.Short() {
		t.Skip("three real-time runs of 6 s")
	}
	dir := t.TempDir()
	record := func(name string, tail time.Duration) string {
		log := filepath.Join(dir, name+".hlog")
		r := metronome(t, runSpec{
			args: []string{"run", "-q", "-e", "TARGET=" + tailServer(t, tail), "-o", "hdrlog=" + log, script("windows/steady.js")},
			env:  []string{"K6_HDRLOG_INTERVAL=250ms"},
		})
		if r.code != 0 {
			t.Fatalf("run %s exited %d\n%s", name, r.code, r.stderr)
		}
		return log
	}
	base := record("base", time.Second)
	again := record("again", time.Second)
	slower := record("slower", 1200*time.Millisecond)

	const tolerance = "10" // percent: half the slower server's 20%
	r := metronome(t, runSpec{args: []string{"compare", "--tolerance", tolerance, base, again}})
	t.Logf("same server:\n%s", r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, "\nverdict: no regression: ") {
		t.Errorf("two runs of one server: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	html := filepath.Join(dir, "compare.html")
	r = metronome(t, runSpec{args: []string{"compare", "--tolerance", tolerance, "--html", html, base, slower}})
	t.Logf("20%% slower:\n%s", r.stdout)
	if r.code != 99 || !strings.Contains(r.stdout, "\nverdict: REGRESSION: corrected_latency p99 is +") {
		t.Errorf("a 20%% slower server: exit %d, want 99\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "new corrected") {
		t.Errorf("the HTML page: %v", err)
	}
}
