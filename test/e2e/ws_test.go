package e2e

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/wstest"
)

// An open-model WebSocket run against a server that freezes from `from`
// to `until`, answering what it receives meanwhile (handshakes and
// messages) at `until`: each iteration opens a session, sends one message
// and waits for the echo. The connect is the request whose
// corrected_latency a WebSocket session records, so an arrival intended in
// the freeze, whose handshake is held, must cover the stall exactly as
// for HTTP.
//
// The arithmetic: at R = 50 arrivals/s and a stall of S = 500 ms, an
// arrival intended at t in the stall is answered at `until`, so its
// corrected latency is until − t; R·(S − 100 ms) = 20 arrivals are held
// more than 100 ms. Tolerances: J = 10 ms of timer and dispatch jitter at
// each of the two edges (R·J = 0.5 arrival each, so ±1), B = 40 ms for
// the held sessions to be released and measured (only adds: R·B = 2), and
// what the machine's load did, from the same run's raw measures as the
// stall tests take it (loadNoise.bound; only adds).
func TestWebSocketStallOpenModel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 3 s load in real time")
	}
	const (
		rate     = 50
		duration = 3 * time.Second
		stall    = 500 * time.Millisecond
		jitter   = 10 * time.Millisecond
		release  = 40 * time.Millisecond
	)
	srv := wstest.Start(t)
	// The binary needs a moment to start; the stall begins 1.5 s from now,
	// and the test checks that the run's arrivals surround it.
	from := time.Now().Add(1500 * time.Millisecond)
	srv.SetStall(from, from.Add(stall))
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	r := metronome(t, runSpec{args: []string{"run", "-q", "-o", "json=" + jsonPath,
		"-e", "URL=" + srv.URL, "-e", "RATE=" + strconv.Itoa(rate), "-e", "DURATION=" + duration.String(), "-e", "VUS=60",
		script("ws/stall.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	lines := readJSONOutput(t, jsonPath)
	arrivals := arrivalsFromJSON(t, lines)
	if len(arrivals) < rate*int(duration/time.Second)-2 {
		t.Fatalf("%d corrected_latency points, want about %d", len(arrivals), rate*int(duration/time.Second))
	}
	if first, last := arrivals[0].intended, arrivals[len(arrivals)-1].intended; !first.Before(srv.StallFrom.Add(-100*time.Millisecond)) || !last.After(srv.StallUntil.Add(100*time.Millisecond)) {
		t.Fatalf("the run's arrivals [%v, %v] do not surround the stall [%v, %v]", first, last, srv.StallFrom, srv.StallUntil)
	}
	load := &loadNoise{burst: release, ideal: func(sent time.Time) time.Duration {
		if sent.Before(srv.StallFrom) || !sent.Before(srv.StallUntil) {
			return 0
		}
		return srv.StallUntil.Sub(sent)
	}}
	slow, ideal := 0, 0
	for _, a := range arrivals {
		if a.latency > 100*time.Millisecond {
			slow++
		}
		load.add(a.intended, a.latency)
		if want := load.ideal(a.intended); want > 0 {
			if want > 100*time.Millisecond {
				ideal++
			}
			if least := load.leastHeld(a.intended, jitter); a.latency < least {
				t.Errorf("arrival intended %v into the stall: corrected latency %v, but the stall held it at least %v",
					a.intended.Sub(srv.StallFrom), a.latency, least)
			}
		}
	}
	lo := ideal - 1
	allow, _ := load.bound(t, "WebSocket", readRaw(t, lines, "ws_connecting"))
	hi := ideal + 1 + rate*int(release)/int(time.Second) + allow
	t.Logf("%d of %d arrivals over 100 ms; arithmetic %d, accepted [%d, %d]", slow, len(arrivals), ideal, lo, hi)
	if slow < lo || slow > hi {
		t.Errorf("%d arrivals over 100 ms, want %d within [%d, %d]", slow, ideal, lo, hi)
	}
	// Counts: one session and one message per completed arrival, as the
	// server saw (a dropped arrival has a corrected_latency but no session).
	done := 0
	for _, a := range arrivals {
		if a.outcome == "" {
			done++
		}
	}
	sum := map[string]float64{}
	lags := 0
	for _, l := range lines {
		if l.Type == "Point" && l.Data.Value != nil {
			sum[l.Metric] += *l.Data.Value
			if l.Metric == "schedule_lag" {
				lags++
			}
		}
	}
	if got, want := int(sum["ws_sessions"]), int(srv.Sessions.Load()); got != want || got != done {
		t.Errorf("ws_sessions = %d, the server saw %d sessions, %d arrivals completed", got, want, done)
	}
	if got, want := int(sum["ws_msgs_sent"]), int(srv.Text.Load()); got != want {
		t.Errorf("ws_msgs_sent = %d, the server received %d", got, want)
	}
	if got := int(sum["ws_msgs_received"]); got != done {
		t.Errorf("ws_msgs_received = %d, want one echo per completed arrival (%d)", got, done)
	}
	if lags < done {
		t.Errorf("%d schedule_lag points for %d completed arrivals", lags, done)
	}
	outcomes := map[string]int{}
	for _, a := range arrivals {
		outcomes[a.outcome]++
	}
	t.Logf("outcomes %v", outcomes)
	// 60 VUs for at most R·(S + 100 ms) = 30 sessions open at once: the
	// executor should not drop arrivals (one at a run's edge was seen).
	if outcomes["dropped"] > 2 {
		t.Errorf("%d arrivals dropped with 60 VUs for about 30 concurrent sessions", outcomes["dropped"])
	}
	t.Logf("%d arrivals, %d completed; ws_sessions %v, ws_msgs_sent %v, schedule_lag points %d", len(arrivals), done, sum["ws_sessions"], sum["ws_msgs_sent"], lags)
}
