package http

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// Every request k6 counts records one corrected_latency sample with its
// http_req_duration's tags, worth its whole time (connection wait
// included) plus the iteration's lag: a plain request, each hop of a
// redirect, each request of a batch. In setup (a zero Latency) none.
func TestRequestsRecordCorrectedLatency(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	const lag = 40 * time.Millisecond
	start := time.Now()
	e.st.Latency = executor.Iteration{Intended: start.Add(-lag)}.Latency(start)
	e.run(fmt.Sprintf(`
		http.get(%q, { tags: { name: "login" } });
		http.get(%q);
		http.batch([%q, %q]);
	`, srv.URL+"/echo", srv.URL+"/redirect/2", srv.URL+"/status/201", srv.URL+"/status/404"))

	reqs, cor := e.samples("http_req_duration"), e.samples("corrected_latency")
	blocked, connecting, tls := e.samples("http_req_blocked"), e.samples("http_req_connecting"), e.samples("http_req_tls_handshaking")
	if blocked[0].Value < connecting[0].Value+tls[0].Value {
		t.Errorf("the first request's http_req_blocked %v ms leaves out its dial %v and handshake %v; k6's holds them",
			blocked[0].Value, connecting[0].Value, tls[0].Value)
	}
	if len(reqs) < 6 || len(cor) != len(reqs) {
		t.Fatalf("%d requests (1, the redirect's hops, 2), %d corrected_latency samples; want one each", len(reqs), len(cor))
	}
	names := map[string]bool{}
	for k, r := range reqs {
		c := cor[k]
		if c.Tags != r.Tags || !c.Time.Equal(r.Time) {
			t.Errorf("request %d: corrected tags %v at %v, http_req_duration's %v at %v", k, c.Tags, c.Time, r.Tags, r.Time)
		}
		own := r.Value + blocked[k].Value
		if want := own + metrics.Milliseconds(lag); math.Abs(c.Value-want) > 1e-6 {
			t.Errorf("request %d: corrected %v ms, want its whole time %v + the lag %v", k, c.Value, own, metrics.Milliseconds(lag))
		}
		name, _ := c.Tags.Get("name")
		names[name] = true
	}
	if !names["login"] || len(names) != len(reqs) {
		t.Errorf("names %v: want login, the three hops' and the batch's", names)
	}

	e.reset()
	e.st.Latency = executor.Latency{}
	e.run(fmt.Sprintf(`http.get(%q)`, srv.URL+"/echo"))
	if n := len(e.samples("corrected_latency")); n != 0 || len(e.samples("http_req_duration")) != 1 {
		t.Errorf("%d corrected_latency samples outside an iteration, want none", n)
	}
}

// A request still waiting when the iteration is cut off emits no k6
// sample but is charged up to the cut, with the request's own tags (no
// status or error: it got no answer) and outcome=interrupted.
func TestInterruptedRequestIsCharged(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	start := time.Now()
	e.st.Latency = executor.Iteration{Intended: start.Add(-10 * time.Millisecond)}.Latency(start)
	go func() {
		time.Sleep(100 * time.Millisecond)
		e.cancel()
	}()
	e.run(fmt.Sprintf(`http.get(%q, { tags: { name: "slow" } })`, srv.URL+"/slow"))
	cut := time.Now()
	cor := e.samples("corrected_latency")
	if len(cor) != 1 || len(e.samples("http_req_duration")) != 0 {
		t.Fatalf("%d corrected_latency samples and %d http_req_duration; want one and none", len(cor), len(e.samples("http_req_duration")))
	}
	c := cor[0]
	if o, _ := c.Tags.Get("outcome"); o != "interrupted" {
		t.Errorf("outcome %q", o)
	}
	for _, k := range []string{"status", "error", "error_code", "expected_response"} {
		if v, ok := c.Tags.Get(k); ok {
			t.Errorf("an unanswered request tagged %s=%s", k, v)
		}
	}
	if n, _ := c.Tags.Get("name"); n != "slow" || !strings.Contains(c.Tags.String(), "GET") {
		t.Errorf("tags %v, want the request's", c.Tags)
	}
	// Charged from its send (≥ 100 ms before the cut) plus the 10 ms lag.
	if limit := metrics.Milliseconds(cut.Sub(start)) + 10; c.Value < 110 || c.Value > limit {
		t.Errorf("charged %v ms, want 110 ms to %v", c.Value, limit)
	}
}

// A POST answered 303 is followed by a GET: as in k6 v2.2.0 (run
// 2026-12-01 against the same redirect), the second hop's samples are
// tagged method=GET, the first's POST, and response.request is the
// request the script made — POST, its URL and body — not the last hop.
func TestRedirectChangesMethodTag(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, nil)
	for _, named := range []bool{false, true, true} {
		e.reset()
		params := "{}"
		if named {
			params = `{ tags: { name: "login" } }`
		}
		v := e.run(fmt.Sprintf(`var r = http.post(%q, "x=1", %s); [r.request.method, r.request.url, r.request.body].join(" ")`,
			srv.URL+"/to/303", params))
		if want := "POST " + srv.URL + "/to/303 x=1"; v.String() != want {
			t.Errorf("response.request: %q, want %q", v.String(), want)
		}
		var methods []string
		for _, s := range e.samples("http_req_duration") {
			m, _ := s.Tags.Get("method")
			methods = append(methods, m)
		}
		if strings.Join(methods, ",") != "POST,GET" {
			t.Errorf("named %v: hops tagged %v, want POST then GET", named, methods)
		}
	}
	// A named POST answered directly keeps its POST tag afterwards.
	e.reset()
	e.run(fmt.Sprintf(`http.post(%q, "x=1", { tags: { name: "login" } })`, srv.URL+"/echo"))
	if m, _ := e.samples("http_req_duration")[0].Tags.Get("method"); m != "POST" {
		t.Errorf("a direct named POST tagged %s", m)
	}
}
