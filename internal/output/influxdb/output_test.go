package influxdb

import (
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/logtest"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

// fakeServer is an InfluxDB /write endpoint behind an http.RoundTripper,
// so that tests run without a network and inside synctest bubbles.
type fakeServer struct {
	mu      sync.Mutex
	bodies  []string
	queries []string
	reqs    []*http.Request
	first   *http.Request
	// status answers every write (204 when zero); hang makes every request
	// wait until it is cancelled.
	status int
	hang   bool
	calls  int
}

func (f *fakeServer) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.calls++
	if f.first == nil {
		f.first = r
	}
	hang, status := f.hang, f.status
	if r.URL.Path == "/query" {
		f.queries = append(f.queries, string(body))
		status = 200
	}
	f.mu.Unlock()
	if hang {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	if status == 0 {
		status = http.StatusNoContent
	}
	msg := ""
	if status/100 == 2 && r.URL.Path == "/write" {
		f.mu.Lock()
		f.bodies = append(f.bodies, string(body))
		f.reqs = append(f.reqs, r)
		f.mu.Unlock()
	} else if status/100 != 2 {
		msg = fmt.Sprintf(`{"error":"refused with %d"}`, status)
	}
	return &http.Response{
		StatusCode: status,
		Status:     fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Body:       io.NopCloser(strings.NewReader(msg)),
		Header:     http.Header{},
		Request:    r,
	}, nil
}

// lines returns every line written, in order.
func (f *fakeServer) lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, b := range f.bodies {
		out = append(out, strings.Split(strings.TrimSuffix(b, "\n"), "\n")...)
	}
	return out
}

type logs = logtest.Lines

func newTestOutput(t *testing.T, env map[string]string, arg string, srv *fakeServer) (*Output, *logs) {
	t.Helper()
	l := &logs{}
	o, err := newOutput(output.Params{Env: env, Arg: arg, Logf: l.Logf}, srv)
	if err != nil {
		t.Fatal(err)
	}
	return o, l
}

func TestRegistered(t *testing.T) {
	if _, ok := output.Lookup(Name); !ok {
		t.Fatal("influxdb is not registered")
	}
}

// TestPoints checks the line protocol of a few samples: the measurement,
// the tags in order without empty ones, url as a string field before
// "value", a typed tag-as-field after it, and nanosecond times.
func TestPoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		srv := &fakeServer{}
		o, l := newTestOutput(t, map[string]string{"K6_INFLUXDB_TAGS_AS_FIELDS": "url,vu:int,zone:bool"},
			"http://127.0.0.1:8086/mydb?precision=ms", srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		at := time.Unix(1700000000, 123456789)
		tags := metrics.NewTags(map[string]string{"method": "GET", "group": "", "url": "http://x/a b", "name": "n,1", "vu": "7", "zone": "true"})
		o.AddSamples([]metrics.Sample{
			{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: 12.5},
			{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: 40},
			{Metric: b.VUs, Time: at, Value: 3},
		})
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		want := []string{
			`http_req_duration,method=GET,name=n\,1 url="http://x/a b",value=12.5,vu=7i,zone=true 1700000000123`,
			`corrected_latency,method=GET,name=n\,1 url="http://x/a b",value=40,vu=7i,zone=true 1700000000123`,
			`vus value=3 1700000000123`,
		}
		if got := srv.lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("wrote\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if q := srv.reqs[0].URL.Query(); q.Get("db") != "mydb" || q.Get("precision") != "ms" {
			t.Errorf("write query %v", q)
		}
		if len(srv.queries) != 1 || srv.queries[0] != `q=CREATE+DATABASE+%22mydb%22` {
			t.Errorf("queries %q", srv.queries)
		}
		if l.String() != "" {
			t.Errorf("log: %s", l)
		}
	})
}

// TestPushIntervalAndConcurrentWrites checks that points are written every
// push interval, not only at stop, and that a NaN is skipped and reported
// instead of failing its write.
func TestPushIntervalAndConcurrentWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		srv := &fakeServer{}
		o, l := newTestOutput(t, map[string]string{"K6_INFLUXDB_PUSH_INTERVAL": "100ms", "K6_INFLUXDB_CONCURRENT_WRITES": "2"}, "", srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			o.AddSamples([]metrics.Sample{{Metric: b.Iterations, Time: time.Now(), Value: float64(i)}})
			time.Sleep(100 * time.Millisecond)
		}
		synctest.Wait()
		if n := len(srv.lines()); n < 9 {
			t.Errorf("%d points written before stop, want the 9 or 10 of the elapsed intervals", n)
		}
		o.AddSamples([]metrics.Sample{{Metric: b.Iterations, Time: time.Now(), Value: nan()}})
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		if n := len(srv.lines()); n != 10 {
			t.Errorf("%d points, want 10", n)
		}
		if !strings.Contains(l.String(), "1 samples could not be written") {
			t.Errorf("the NaN is not reported: %q", l)
		}
	})
}

func nan() float64 { return math.NaN() }

// TestStallingServer checks that a server that never answers neither
// blocks AddSamples nor holds Stop past stopTimeout, that memory stays
// bounded (writes are dropped, not piled up) and that the loss is
// reported.
func TestStallingServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		srv := &fakeServer{hang: true}
		o, l := newTestOutput(t, map[string]string{"K6_INFLUXDB_PUSH_INTERVAL": "10ms"}, "", srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		tags := metrics.NewTags(map[string]string{"scenario": "default", "padding": strings.Repeat("x", 200)})
		batch := make([]metrics.Sample, 100)
		for i := range batch {
			batch[i] = metrics.Sample{Metric: b.HTTPReqs, Tags: tags, Time: time.Now(), Value: 1}
		}
		// 60 s of 10,000 points a second, ~250 bytes each: 150 MB if
		// kept, over twice the queue's limit.
		const rounds = 6000
		for i := range rounds {
			before := time.Now()
			o.AddSamples(batch)
			if time.Since(before) != 0 {
				t.Fatalf("AddSamples %d blocked for %v", i, time.Since(before))
			}
			time.Sleep(10 * time.Millisecond)
		}
		stopAt := time.Now()
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(stopAt); took > stopTimeout {
			t.Errorf("Stop took %v, budget %v", took, stopTimeout)
		}
		dropped, droppedPoints := o.queue.Dropped()
		failed := o.failedPoints.Load()
		if int64(droppedPoints)+failed != rounds*int64(len(batch)) {
			t.Errorf("%d points dropped + %d failed, want all %d accounted for", droppedPoints, failed, rounds*len(batch))
		}
		out := l.String()
		t.Logf("%d writes dropped; log:\n%s", dropped, out)
		if !strings.Contains(out, "were dropped because the server did not keep up") || !strings.Contains(out, "were not written to InfluxDBv1 (http://localhost:8086)") {
			t.Errorf("loss not reported:\n%s", out)
		}
	})
}

// TestRefusingServer checks a real refused connection: no retry storm,
// every point counted as lost, Stop quick.
func TestRefusingServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connecting is refused
	b := metrics.RegisterBuiltin(metrics.NewRegistry())
	logs := &logs{}
	o, err := newOutput(output.Params{Arg: "http://" + addr + "/db", Logf: logs.Logf,
		Env: map[string]string{"K6_INFLUXDB_PUSH_INTERVAL": "50ms"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		o.AddSamples([]metrics.Sample{{Metric: b.Iterations, Time: time.Now(), Value: 1}})
		time.Sleep(60 * time.Millisecond)
	}
	start := time.Now()
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > stopTimeout {
		t.Errorf("Stop took %v", took)
	}
	if got := o.failedPoints.Load(); got != 5 {
		t.Errorf("%d points counted as not written, want 5", got)
	}
	if !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("log: %s", logs)
	}
}

// TestClientErrorsAreNotRetried checks that a 4xx (bad points, no such
// database) is reported at once, without retries, and a 5xx is retried.
func TestClientErrorsAreNotRetried(t *testing.T) {
	for status, calls := range map[int]int{400: 1, 503: attempts} {
		synctest.Test(t, func(t *testing.T) {
			b := metrics.RegisterBuiltin(metrics.NewRegistry())
			srv := &fakeServer{status: status}
			o, l := newTestOutput(t, nil, "", srv)
			if err := o.Start(); err != nil {
				t.Fatal(err)
			}
			o.AddSamples([]metrics.Sample{{Metric: b.Iterations, Time: time.Now(), Value: 1}})
			if err := o.Stop(); err != nil {
				t.Fatal(err)
			}
			if got := srv.calls - 1; got != calls { // less the CREATE DATABASE
				t.Errorf("HTTP %d: %d writes, want %d", status, got, calls)
			}
			if !strings.Contains(l.String(), fmt.Sprintf("refused with %d", status)) {
				t.Errorf("HTTP %d: log %q", status, l)
			}
		})
	}
}

// TestInputBufferFull checks that a full input buffer drops and counts
// instead of blocking, and that Stop says so.
func TestInputBufferFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		srv := &fakeServer{}
		o, _ := newTestOutput(t, nil, "", srv)
		// Before Start nothing drains the buffer.
		for range inputBuffer + 3 {
			o.AddSamples([]metrics.Sample{{Metric: b.HTTPReqs, Time: time.Now(), Value: 1}})
		}
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		if err := o.Stop(); err == nil || !strings.Contains(err.Error(), "3 samples were dropped") {
			t.Errorf("Stop = %v, want an error counting the 3 dropped samples", err)
		}
		if n := len(srv.lines()); n != inputBuffer {
			t.Errorf("%d points written, want %d", n, inputBuffer)
		}
	})
}

// TestSecretsStayOutOfMessages checks that the password, given in the URL
// or the environment, reaches neither the banner nor the warnings, even
// when the server echoes it back.
func TestSecretsStayOutOfMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := metrics.RegisterBuiltin(metrics.NewRegistry())
		srv := &fakeServer{status: 401}
		o, l := newTestOutput(t, map[string]string{"K6_INFLUXDB_PASSWORD": "ignored"}, "http://bob:hunter2pw@influx.test:8086/k6", srv)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		o.AddSamples([]metrics.Sample{{Metric: b.HTTPReqs, Time: time.Now(), Value: 1}})
		if err := o.Stop(); err != nil {
			t.Fatal(err)
		}
		if u, p, ok := srv.first.BasicAuth(); !ok || u != "bob" || p != "hunter2pw" {
			t.Errorf("basic auth %q %q %v, want bob's from the URL", u, p, ok)
		}
		all := o.Description() + "\n" + l.String()
		if !strings.Contains(all, "HTTP 401") || !strings.Contains(all, "InfluxDBv1 (http://influx.test:8086)") {
			t.Errorf("the failure is not reported:\n%s", all)
		}
		if strings.Contains(all, "hunter2pw") {
			t.Errorf("the password leaked:\n%s", all)
		}
	})
	_, err := ParseConfig(map[string]string{"K6_INFLUXDB_ADDR": "ftp://bob:hunter2pw@influx.test/"}, "")
	if err == nil || strings.Contains(err.Error(), "hunter2pw") {
		t.Errorf("ParseConfig error = %v, want one without the password", err)
	}
}

// TestUDP writes into a UDP socket in datagrams no larger than the
// payload size, cut between lines.
func TestUDP(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	b := metrics.RegisterBuiltin(metrics.NewRegistry())
	o, err := newOutput(output.Params{Arg: "udp://" + pc.LocalAddr().String() + "?payload_size=100"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	tags := metrics.NewTags(map[string]string{"scenario": "default"})
	for range 10 {
		o.AddSamples([]metrics.Sample{{Metric: b.Iterations, Tags: tags, Time: time.Unix(1, 0), Value: 1}})
	}
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	const line = "iterations,scenario=default value=1 1000000000\n"
	var got strings.Builder
	buf := make([]byte, 2048)
	for got.Len() < 10*len(line) {
		_ = pc.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("after %q: %v", got.String(), err)
		}
		if n > 100 || buf[n-1] != '\n' {
			t.Errorf("datagram of %d bytes: %q", n, buf[:n])
		}
		got.Write(buf[:n])
	}
	if got.String() != strings.Repeat(line, 10) {
		t.Errorf("received %q", got.String())
	}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(map[string]string{
		"K6_INFLUXDB_ADDR": "http://a:8086", "K6_INFLUXDB_DB": "envdb", "K6_INFLUXDB_PUSH_INTERVAL": "3s",
		"K6_INFLUXDB_TAGS_AS_FIELDS": "vu:int, url", "K6_INFLUXDB_INSECURE": "true",
	}, "https://b:8087/urldb?concurrentWrites=9&tagsAsFields=iter&tagsAsFields=url&retention=autogen")
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "https://b:8087" || c.DB != "urldb" || c.PushInterval != 3*time.Second || c.ConcurrentWrites != 9 ||
		!c.Insecure || c.Retention != "autogen" || strings.Join(c.TagsAsFields, ",") != "iter,url" {
		t.Errorf("config %+v", c)
	}
	d, _ := ParseConfig(nil, "")
	if d.Addr != "http://localhost:8086" || d.DB != "k6" || d.PushInterval != time.Second || d.ConcurrentWrites != 4 ||
		strings.Join(d.TagsAsFields, ",") != "vu,iter,url" {
		t.Errorf("defaults %+v", d)
	}
	for _, bad := range []struct {
		env  map[string]string
		arg  string
		want string
	}{
		{map[string]string{"K6_INFLUXDB_PUSH_INTERVAL": "0s"}, "", "K6_INFLUXDB_PUSH_INTERVAL"},
		{map[string]string{"K6_INFLUXDB_CONCURRENT_WRITES": "-1"}, "", "K6_INFLUXDB_CONCURRENT_WRITES"},
		{map[string]string{"K6_INFLUXDB_TAGS_AS_FIELDS": "vu:number"}, "", `"number" is not a field type`},
		{map[string]string{"K6_INFLUXDB_TAGS_AS_FIELDS": "vu,vu:int"}, "", "listed twice"},
		{map[string]string{"K6_INFLUXDB_PRECISION": "h"}, "", "K6_INFLUXDB_PRECISION"},
		{nil, "http://h:8086/db?bogus=1", `unknown option "bogus"`},
		{nil, "http://h:8086/db?insecure=maybe", "option insecure"},
		{nil, "tcp://h:8086", "K6_INFLUXDB_ADDR"},
	} {
		if _, err := ParseConfig(bad.env, bad.arg); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseConfig(%v, %q) = %v, want an error with %q", bad.env, bad.arg, err, bad.want)
		}
	}
}
