package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/faultserver"
)

// startFault starts a fault server that the test closes at its end.
func startFault(t *testing.T, m faultserver.Mode) *faultserver.Server {
	t.Helper()
	s := &faultserver.Server{Mode: m}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestFaultRunAccounting runs iterations that each meet seven kinds of
// target (one healthy, six failing) and checks that every request is
// counted once, every failure is a failure, and that the error tag gives
// one series per fault rather than one per request.
func TestFaultRunAccounting(t *testing.T) {
	t.Parallel()
	servers := map[string]faultserver.Mode{
		"OK": faultserver.OK, "CUT": faultserver.CutBody, "RESET": faultserver.ResetAfterRequest,
		"REFUSE": faultserver.Refuse, "BLACKHOLE": faultserver.Blackhole, "GARBAGE": faultserver.Garbage,
		"CHUNKED": faultserver.ChunkedCut,
	}
	args := []string{"-q"}
	var ok *faultserver.Server
	for env, m := range servers {
		s := startFault(t, m)
		if m == faultserver.OK {
			ok = s
		}
		args = append(args, "-e", env+"="+s.URL()+"/")
	}
	out := filepath.Join(t.TempDir(), "out.json")
	args = append(args, "--out", "json="+out, script("faults/mixed.js"))
	_, e := runExported(t, 0, args...)

	const iterations, perIteration = 15, 7
	if n := e.num(t, "iterations", "count"); n != iterations {
		t.Errorf("iterations %v, want %d", n, iterations)
	}
	if n := e.num(t, "http_reqs", "count"); n != iterations*perIteration {
		t.Errorf("http_reqs %v, want %d", n, iterations*perIteration)
	}
	// In the export a Rate's passes are its non-zero samples: failures.
	failed, succeeded := e.num(t, "http_req_failed", "passes"), e.num(t, "http_req_failed", "fails")
	if failed != iterations*(perIteration-1) || succeeded != iterations {
		t.Errorf("http_req_failed: %v failed and %v succeeded, want %d and %d", failed, succeeded, iterations*(perIteration-1), iterations)
	}
	if n := ok.Requests(); n != iterations {
		t.Errorf("the healthy server answered %d requests, want %d", n, iterations)
	}

	// The JSON output: one series of http_reqs per target, and k6's
	// error texts.
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	series := map[string]int{}
	errs := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p struct {
			Type, Metric string
			Data         struct{ Tags map[string]string }
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("JSON output line %q: %v", sc.Text(), err)
		}
		if p.Type != "Point" || p.Metric != "http_reqs" {
			continue
		}
		keys := make([]string, 0, len(p.Data.Tags))
		for k, v := range p.Data.Tags {
			keys = append(keys, k+"="+v)
		}
		sort.Strings(keys)
		series[strings.Join(keys, ",")]++
		errs[p.Data.Tags["error"]] = true
	}
	if len(series) != perIteration {
		t.Errorf("%d series of http_reqs, want one per target (%d): %v", len(series), perIteration, series)
	}
	for _, want := range []string{"", "unexpected EOF", "read: connection reset by peer", "dial: connection refused",
		"request timeout", `malformed HTTP status code "is"`} {
		if !errs[want] {
			t.Errorf("no request tagged error=%q; tags seen: %v", want, errs)
		}
	}
}

// TestServerGoesAwayMidRun closes the target after it answered 20
// requests of a 2 s run: later requests fail as refused, and every
// iteration and request is still counted once.
func TestServerGoesAwayMidRun(t *testing.T) {
	t.Parallel()
	s := startFault(t, faultserver.OK)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if s.Requests() >= 20 {
					s.Close()
					return
				}
			}
		}
	}()
	_, e := runExported(t, 0, "-q", "-e", "TARGET="+s.URL()+"/", script("faults/goaway.js"))
	iterations, reqs := e.num(t, "iterations", "count"), e.num(t, "http_reqs", "count")
	failed, succeeded := e.num(t, "http_req_failed", "passes"), e.num(t, "http_req_failed", "fails")
	if iterations != reqs || failed+succeeded != reqs {
		t.Errorf("iterations %v, http_reqs %v, failed %v + succeeded %v: want one request per iteration, each counted once",
			iterations, reqs, failed, succeeded)
	}
	// A request the server read just before it closed may still have
	// lost its answer: at most one per VU.
	if served := float64(s.Requests()); succeeded > served || succeeded < served-2 || served < 20 {
		t.Errorf("%v requests succeeded, the server answered %v (closing after 20)", succeeded, served)
	}
	if failed < 1 {
		t.Errorf("no request failed after the server went away")
	}
}
