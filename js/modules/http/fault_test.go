package http

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/faultserver"
	"github.com/metronome-load/metronome/metrics"
)

// k6Fault is what real k6 v2.2.0 recorded for one request to a fault
// server (internal/testkit/faultserver), learnt by running the same requests
// through /work/peers/k6 on loopback: response.status, response.error
// (also the error tag), response.error_code, the http_req_failed value
// and the length of response.body (-1: null; -2: some of the body, not
// all of it).
type k6Fault struct {
	mode    faultserver.Mode
	js      string // the request, with %q for the server's URL
	status  int
	errors  []string // one of these; empty means none
	codes   []int    // one of these
	failed  float64
	bodyLen int
}

// k6Faults are k6's answers. Where the kernel decides in which phase a
// fault shows (a reset right after accept is seen while dialling, writing
// or reading), k6 gave each of the answers listed on repeated runs.
var k6Faults = []k6Fault{
	{faultserver.OK, `http.get(%q)`, 200, nil, []int{0}, 0, 2},
	{faultserver.Refuse, `http.get(%q)`, 0, []string{"dial: connection refused"}, []int{1212}, 1, -1},
	{faultserver.Refuse, `http.post(%q, "x")`, 0, []string{"dial: connection refused"}, []int{1212}, 1, -1},
	{faultserver.ResetBeforeRequest, `http.get(%q)`, 0,
		[]string{"read: connection reset by peer", "dial: connection reset by peer", "write: connection reset by peer", "write: broken pipe"},
		[]int{1220, 1201}, 1, -1},
	{faultserver.ResetAfterRequest, `http.get(%q)`, 0, []string{"read: connection reset by peer"}, []int{1220}, 1, -1},
	{faultserver.ResetAfterRequest, `http.post(%q, "x")`, 0, []string{"read: connection reset by peer"}, []int{1220}, 1, -1},
	{faultserver.CloseAfterRequest, `http.get(%q)`, 0, []string{"EOF"}, []int{1000}, 1, -1},
	{faultserver.Blackhole, `http.get(%q, {timeout: "300ms"})`, 0, []string{"request timeout"}, []int{1050}, 1, -1},
	{faultserver.SlowHead, `http.get(%q, {timeout: "5s"})`, 200, nil, []int{0}, 0, 2},
	{faultserver.SlowHead, `http.get(%q, {timeout: "150ms"})`, 0, []string{"request timeout"}, []int{1050}, 1, -1},
	{faultserver.SlowBody, `http.get(%q, {timeout: "5s"})`, 200, nil, []int{0}, 0, 20},
	// The body is cut off by the timeout: k6 keeps the bytes that came.
	{faultserver.SlowBody, `http.get(%q, {timeout: "100ms"})`, 0, []string{"request timeout"}, []int{1050}, 1, -2},
	{faultserver.Garbage, `http.get(%q)`, 0, []string{`malformed HTTP status code "is"`}, []int{1000}, 1, -1},
	{faultserver.CutBody, `http.get(%q)`, 0, []string{"unexpected EOF"}, []int{1000}, 1, 1000},
	{faultserver.CutBody, `http.get(%q, {responseType: "binary"})`, 0, []string{"unexpected EOF"}, []int{1000}, 1, 1000},
	{faultserver.CutBody, `http.get(%q, {responseType: "none"})`, 0, []string{"unexpected EOF"}, []int{1000}, 1, -1},
	{faultserver.LengthTooLong, `http.get(%q, {timeout: "300ms"})`, 0, []string{"request timeout"}, []int{1050}, 1, 10},
	{faultserver.LengthTooShort, `http.get(%q)`, 200, nil, []int{0}, 0, 2},
	{faultserver.ChunkedBadSize, `http.get(%q)`, 0, []string{"invalid byte in chunk length"}, []int{1000}, 1, 0},
	{faultserver.ChunkedCut, `http.get(%q)`, 0, []string{"unexpected EOF"}, []int{1000}, 1, 5},
	{faultserver.Informational, `http.get(%q)`, 200, nil, []int{0}, 0, 2},
	{faultserver.NoContent, `http.get(%q)`, 204, nil, []int{0}, 0, -1},
	{faultserver.NoContent, `http.get(%q, {responseType: "binary"})`, 204, nil, []int{0}, 0, -1},
	{faultserver.NotModified, `http.get(%q)`, 304, nil, []int{0}, 0, -1},
	{faultserver.HeadLength, `http.head(%q)`, 200, nil, []int{0}, 0, 0},
	{faultserver.HeadLength, `http.get(%q)`, 200, nil, []int{0}, 0, 100},
}

// TestFaultsMatchK6 sends each request of k6Faults twice on one VU (the
// second may reuse what the first left of the connection) and checks the
// response, the samples' tags and http_req_failed against k6's answers.
func TestFaultsMatchK6(t *testing.T) {
	servers := map[faultserver.Mode]*faultserver.Server{}
	for _, f := range k6Faults {
		if servers[f.mode] != nil {
			continue
		}
		s := &faultserver.Server{Mode: f.mode, Step: 10 * time.Millisecond}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		servers[f.mode] = s
	}
	e := newEnv(t, nil)
	for _, f := range k6Faults {
		req := fmt.Sprintf(f.js, servers[f.mode].URL()+"/")
		for round := 0; round < 2; round++ {
			name := fmt.Sprintf("%s %s #%d", f.mode, req, round+1)
			e.reset()
			v := e.run(fmt.Sprintf(`var r = %s; JSON.stringify([r.status, r.error, r.error_code,
				r.body === null ? -1 : (typeof r.body === "string" ? r.body.length : r.body.byteLength), r.proto])`, req))
			var got []any
			if err := json.Unmarshal([]byte(v.String()), &got); err != nil || len(got) != 5 {
				t.Fatalf("%s: cannot read %s: %v", name, v, err)
			}
			status, code, bodyLen := int(got[0].(float64)), int(got[2].(float64)), int(got[3].(float64))
			errText, proto := got[1].(string), got[4].(string)
			if status != f.status {
				t.Errorf("%s: status %d, k6 %d", name, status, f.status)
			}
			if !oneOf(errText, f.errors) {
				t.Errorf("%s: error %q, k6 %q", name, errText, f.errors)
			}
			if !oneOf(code, f.codes) {
				t.Errorf("%s: error_code %d, k6 %v", name, code, f.codes)
			}
			switch {
			case f.bodyLen == -2: // partial: some bytes, not all
				if bodyLen < 0 || bodyLen >= 20 {
					t.Errorf("%s: body length %d, k6 keeps the part that arrived", name, bodyLen)
				}
			case bodyLen != f.bodyLen:
				t.Errorf("%s: body length %d, k6 %d", name, bodyLen, f.bodyLen)
			}
			if f.status == 0 && proto != "" {
				t.Errorf("%s: a failed request reports protocol %q; k6 none", name, proto)
			}
			reqs := e.samples("http_reqs")
			failed := e.samples("http_req_failed")
			if len(reqs) != 1 || len(failed) != 1 {
				t.Fatalf("%s: %d http_reqs and %d http_req_failed samples, want 1 each", name, len(reqs), len(failed))
			}
			if failed[0].Value != f.failed {
				t.Errorf("%s: http_req_failed %v, k6 %v", name, failed[0].Value, f.failed)
			}
			s := reqs[0]
			if tag(s, "status") != fmt.Sprint(f.status) || tag(s, "error") != errText ||
				(code != 0) != hasTag(s, "error_code") || (code != 0 && tag(s, "error_code") != fmt.Sprint(code)) {
				t.Errorf("%s: tags %v disagree with the response", name, s.Tags)
			}
			if f.status == 0 && hasTag(s, "proto") {
				t.Errorf("%s: a failed request is tagged proto=%s; k6 tags none", name, tag(s, "proto"))
			}
		}
	}
}

func oneOf[T comparable](v T, set []T) bool {
	if len(set) == 0 {
		var zero T
		return v == zero
	}
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

// TestCutBodyIsAFailure is issue #10's first case on its own: a body cut
// off after 1,000 of 100,000 announced bytes used to count as a success
// (status 200, http_req_failed 0).
func TestCutBodyIsAFailure(t *testing.T) {
	s := &faultserver.Server{Mode: faultserver.CutBody}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := newEnv(t, nil)
	v := e.run(fmt.Sprintf(`var r = http.get(%q); [r.status, r.error_code, r.error].join("|")`, s.URL()))
	if v.String() != "0|1000|unexpected EOF" {
		t.Errorf("cut body: %q, k6 says 0|1000|unexpected EOF", v)
	}
	if f := e.samples("http_req_failed"); len(f) != 1 || f[0].Value != 1 {
		t.Errorf("cut body: http_req_failed %v, want one sample of 1", f)
	}
}

// TestBodyErrorWarning holds k6's Request Failed warning of a body that
// could not be read: the cause alone, since k6 reads the body itself after
// Go's client returned (k6 v2.2.0: error="unexpected EOF" for a body cut
// short, error="request timeout" for one still arriving at the timeout),
// and no warning for a request that throws its error instead.
func TestBodyErrorWarning(t *testing.T) {
	cut := &faultserver.Server{Mode: faultserver.CutBody}
	stall := &faultserver.Server{Mode: faultserver.StallLength, Size: 100}
	for _, s := range []*faultserver.Server{cut, stall} {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
	}
	for _, c := range []struct{ js, want string }{
		{fmt.Sprintf(`http.get(%q)`, cut.URL()), `level=WARN msg="Request Failed" error="unexpected EOF"`},
		{fmt.Sprintf(`http.post(%q, "x")`, cut.URL()), `level=WARN msg="Request Failed" error="unexpected EOF"`},
		{fmt.Sprintf(`http.get(%q, {timeout: "200ms"})`, stall.URL()), `level=WARN msg="Request Failed" error="request timeout"`},
		{fmt.Sprintf(`try { http.get(%q, {throw: true}) } catch (e) {}`, cut.URL()), ``},
	} {
		e := newEnv(t, nil)
		e.run(c.js)
		if got := e.logs.text(); got != c.want {
			t.Errorf("%s logged:\n%s\nk6 logs:\n%s", c.js, got, c.want)
		}
	}
}

// TestErrorTagIsOneSeries is issue #10's second case: every reset used to
// carry its local port in the error tag, so each failed request made a
// time series of its own.
func TestErrorTagIsOneSeries(t *testing.T) {
	s := &faultserver.Server{Mode: faultserver.ResetAfterRequest}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := newEnv(t, nil)
	e.run(fmt.Sprintf(`for (var i = 0; i < 50; i++) http.get(%q)`, s.URL()))
	series := map[*metrics.TagSet]bool{}
	for _, smp := range e.samples("http_reqs") {
		series[smp.Tags] = true
		if err := tag(smp, "error"); err != "read: connection reset by peer" {
			t.Fatalf("error tag %q, k6's is %q", err, "read: connection reset by peer")
		}
	}
	if len(series) != 1 || len(e.samples("http_reqs")) != 50 {
		t.Errorf("50 resets made %d series of http_reqs from %d samples, want 1 from 50", len(series), len(e.samples("http_reqs")))
	}
	if !strings.Contains(e.logs.text(), "127.0.0.1") {
		t.Errorf("the warning should keep the full error, addresses included: %q", e.logs.text())
	}
}

// TestServerGoesAway checks requests after the server closed its
// listener and its kept connections: k6 reports each as refused, without
// first failing on the dead kept connection.
func TestServerGoesAway(t *testing.T) {
	s := &faultserver.Server{Mode: faultserver.OK}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, nil)
	if v := e.run(fmt.Sprintf(`http.get(%q).status`, s.URL())); v.String() != "200" {
		t.Fatalf("before: %s", v)
	}
	s.Close()
	for _, req := range []string{`http.get(%q)`, `http.post(%q, "x")`, `http.get(%q)`} {
		v := e.run(fmt.Sprintf(`var r = `+req+`; [r.status, r.error_code, r.error].join("|")`, s.URL()))
		if v.String() != "0|1212|dial: connection refused" {
			t.Errorf("after the server went away: %q, k6 0|1212|dial: connection refused", v)
		}
	}
}

// TestHugeBodyDiscarded reads a 100 MB body with responseType "none"
// (what discardResponseBodies sets): it must not be held in memory.
func TestHugeBodyDiscarded(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 100 MB over loopback")
	}
	s := &faultserver.Server{Mode: faultserver.Big}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := newEnv(t, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := e.run(fmt.Sprintf(`var r = http.get(%q, {responseType: "none", timeout: "60s"}); [r.status, r.body, r.error].join("|")`, s.URL()))
	runtime.ReadMemStats(&after)
	if v.String() != "200||" {
		t.Errorf("100 MB body: %q", v)
	}
	if rcv := e.st.DataReceived; rcv < 100<<20 {
		t.Errorf("the iteration's data_received: %d bytes, want at least 100 MiB", rcv)
	}
	// Allocated while the body streamed through: buffers, not the body.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("discarding a 100 MB body allocated %d MB", grew>>20)
	}
}
