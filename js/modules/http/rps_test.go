package http

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/internal/httpclient"
	"github.com/metronome-load/metronome/ratelimit"
)

// redirectTransport answers at once: /r/N redirects to /r/N-1 until N is
// 0, anything else is 200. It fires the trace callbacks a real transport
// fires, so timings are measured.
type redirectTransport struct{}

func (redirectTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if tr := httptrace.ContextClientTrace(req.Context()); tr != nil {
		tr.GetConn("fake:80")
		tr.GotConn(httptrace.GotConnInfo{Reused: true})
		tr.WroteRequest(httptrace.WroteRequestInfo{})
		tr.GotFirstResponseByte()
	}
	resp := &http.Response{
		Status: "200 OK", StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req,
	}
	if n, ok := strings.CutPrefix(req.URL.Path, "/r/"); ok {
		if k, _ := strconv.Atoi(n); k > 0 {
			resp.Status, resp.StatusCode = "302 Found", 302
			resp.Header.Set("Location", "/r/"+strconv.Itoa(k-1))
		}
	}
	return resp, nil
}

// The rps option holds requests back as k6 v2.2.0 does (issue 25; k6's
// answers on a loopback server at rps 5: sequential gets 0, 200, 400 ms
// apart, a batch of 6 takes 1.2 s, a get that follows 4 redirects waits
// one interval, and timings.blocked leaves the wait out). In virtual time
// the waits are exact.
func TestRPSHoldsRequestsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.st.Client = &http.Client{Transport: redirectTransport{}}
		e.st.RPS = ratelimit.New(5)
		v := e.run(`
const out = {};
let t0 = Date.now();
out.seq = [];
for (let i = 0; i < 3; i++) { http.get("http://fake/"); out.seq.push(Date.now() - t0); }
t0 = Date.now();
http.batch([["GET", "http://fake/"], ["GET", "http://fake/"], ["GET", "http://fake/"]]);
out.batch = Date.now() - t0;
t0 = Date.now();
const r = http.get("http://fake/r/4");
out.redirect = [Date.now() - t0, r.status, r.url];
t0 = Date.now();
const last = http.get("http://fake/");
out.last = [Date.now() - t0, last.timings.blocked, last.timings.duration];
JSON.stringify(out)`)
		// The third get went at 400 ms, so the batch's three go at 600,
		// 800 and 1000 ms, the redirected get at 1200, the last at 1400.
		const want = `{"seq":[0,200,400],"batch":600,"redirect":[200,200,"http://fake/r/0"],"last":[200,0,0]}`
		if v.String() != want {
			t.Errorf("got  %s\nwant %s", v, want)
		}
		if n := len(e.samples("http_reqs")); n != 3+3+5+1 {
			t.Errorf("%d http_reqs samples, want 12 (each redirect hop is one)", n)
		}
	})
}

// A VU whose iteration ends while a request waits for the limit stops
// waiting within httpclient.PollParent, and the request fails as in an ended
// iteration instead of going out late.
func TestRPSWaitEndsWithTheIteration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.st.Client = &http.Client{Transport: redirectTransport{}}
		e.st.RPS = ratelimit.New(1)
		ctx, cancel := context.WithCancel(context.Background())
		e.vu.ctx = ctx
		time.AfterFunc(100*time.Millisecond, cancel)
		v := e.run(`
http.get("http://fake/");
const t0 = Date.now();
const r = http.get("http://fake/");
[Date.now() - t0, r.status].join(" ")`)
		waited, status, _ := strings.Cut(v.String(), " ")
		ms, _ := strconv.Atoi(waited)
		if ms < 100 || ms > 100+int(httpclient.PollParent/time.Millisecond) || status != "0" {
			t.Fatalf("the second request waited %s ms and got status %s; want 100-%d ms and status 0",
				waited, status, 100+httpclient.PollParent/time.Millisecond)
		}
	})
}
