package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
