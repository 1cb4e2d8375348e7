package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/restapi"
	"github.com/metronome-load/metronome/metrics"
)

func TestChecks(t *testing.T) {
	reg := metrics.NewRegistry()
	metrics.RegisterBuiltin(reg)
	reg.MustNew("bytes_in", metrics.Trend, metrics.Data)
	reg.MustNew("queue", metrics.Gauge, metrics.Default)
	base := `testrun_name="t"`
	for _, c := range []struct{ key, src, want string }{
		{"corrected_latency", "p(99)<500", `histogram_quantile(0.99, sum(k6_corrected_latency_seconds{testrun_name="t"}))`},
		{"corrected_latency{name:login}", "med<100", `histogram_quantile(0.5, sum(k6_corrected_latency_seconds{testrun_name="t",name="login"}))`},
		{"bytes_in", "avg<10", `histogram_sum(sum(k6_bytes_in_bytes{testrun_name="t"})) / histogram_count(sum(k6_bytes_in_bytes{testrun_name="t"}))`},
		{"http_reqs{status:500}", "count<10", `sum(k6_http_reqs_total{testrun_name="t",status="500"})`},
		{"http_req_failed", "rate<0.01", `sum(round(k6_http_req_failed_rate{testrun_name="t"} * k6_http_reqs_total{testrun_name="t"})) / sum(k6_http_reqs_total{testrun_name="t"})`},
		{"vus", "value<100", `sum(k6_vus{testrun_name="t"})`},
		{"corrected_latency", "max<500", "a native histogram keeps no exact max"},
		{"checks", "rate>0.9", "only http_req_failed (weighed by http_reqs) adds up"},
		{"queue", "value<5", "only the VUs' add up"},
		{"nope", "count<1", `metric "nope" is not defined`},
		{"http_reqs", "p(99)<1", `"p(99)" is not valid for a counter metric`},
	} {
		ch, err := newCheck(reg, c.key, metrics.ThresholdDef{Source: c.src}, base)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = ch.Query
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s %s: %q, want %q", c.key, c.src, got, c.want)
		}
	}
	ch, _ := newCheck(reg, "http_reqs", metrics.ThresholdDef{Source: "rate<10"}, "")
	if !ch.PerSecond || ch.Query != "sum(k6_http_reqs_total{})" {
		t.Errorf("a counter's rate: %+v", ch)
	}
	ch, _ = newCheck(reg, "http_req_duration", metrics.ThresholdDef{Source: "p(95)<1"}, "")
	if ch.Scale != 1000 {
		t.Errorf("a time trend's values are seconds in Prometheus, ms in thresholds: scale %v", ch.Scale)
	}
}

// fakeRunner is a runner's REST API: paused until started, then running
// until stopped or done.
type fakeRunner struct {
	*httptest.Server
	status  atomic.Int64
	stopped atomic.Bool
}

func newFakeRunner(t *testing.T) *fakeRunner {
	f := &fakeRunner{}
	f.status.Store(restapi.StatusPausedBeforeRun)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch {
			b, _ := io.ReadAll(r.Body)
			if strings.Contains(string(b), `"stopped":true`) {
				f.stopped.Store(true)
				f.status.Store(restapi.StatusEnded)
			}
		}
		fmt.Fprintf(w, `{"data":{"type":"status","id":"default","attributes":{"status":%d}}}`, f.status.Load())
	}))
	t.Cleanup(f.Close)
	return f
}

// fakeProm answers every query with the value its function gives.
func fakeProm(t *testing.T, value func(query string) (float64, bool)) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		v, ok := value(r.Form.Get("query"))
		result := "[]"
		if ok {
			result = fmt.Sprintf(`[{"metric":{},"value":[%d,"%g"]}]`, time.Now().Unix(), v)
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":%s}}`, result)
	}))
	t.Cleanup(s.Close)
	return s
}

// The union's count crosses its abortOnFail threshold once the runners
// run: the watch stops every runner through its API; a failing threshold
// whose delayAbortEval has not passed, and one without abortOnFail, do
// not stop anything.
func TestRunStopsEveryRunner(t *testing.T) {
	reg := metrics.NewRegistry()
	metrics.RegisterBuiltin(reg)
	a, b := newFakeRunner(t), newFakeRunner(t)
	var mu sync.Mutex
	count := 0.0
	prom := fakeProm(t, func(q string) (float64, bool) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(q, "k6_iterations_total"):
			if a.status.Load() < restapi.StatusStarted {
				return 0, false
			}
			count += 40
			return count, true
		case strings.Contains(q, "k6_corrected_latency_seconds"):
			return 0.25, true // 250 ms
		}
		return 0, false
	})
	var out bytes.Buffer
	go func() {
		time.Sleep(200 * time.Millisecond)
		a.status.Store(restapi.StatusRunning)
		b.status.Store(restapi.StatusRunning)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := Run(ctx, Config{
		Prometheus: prom.URL, Selector: `testrun_name="t"`, Runners: []string{a.URL, b.URL},
		Thresholds: map[string][]metrics.ThresholdDef{
			"iterations":        {{Source: "count<100", AbortOnFail: true}},
			"corrected_latency": {{Source: "p(99)<100", AbortOnFail: true, DelayAbortEval: time.Hour}, {Source: "p(50)<10"}},
		},
		Registry: reg, Interval: 50 * time.Millisecond, Settle: 200 * time.Millisecond, Stdout: &out,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// The fake runners answer on after they ended, as with --linger.
	if !strings.Contains(out.String(), "still answering 200ms after the test ended: "+a.URL+", "+b.URL) {
		t.Errorf("no word of the runners that still answer:\n%s", out.String())
	}
	if len(res.Crossed) != 1 || res.Crossed[0] != "iterations: count<100" {
		t.Errorf("crossed %v, want only iterations count<100\n%s", res.Crossed, out.String())
	}
	if !a.stopped.Load() || !b.stopped.Load() {
		t.Errorf("stopped: %v %v, want both runners", a.stopped.Load(), b.stopped.Load())
	}
	if !strings.Contains(out.String(), "corrected_latency p(99)=250 ✗") || !strings.Contains(out.String(), "the test started") {
		t.Errorf("output:\n%s", out.String())
	}
	if v := res.Final["corrected_latency: p(99)<100"]; v != 250 {
		t.Errorf("final p(99) %v, want 250 (ms)", v)
	}
}

// A test that ends without crossing ends the watch without stopping
// anything; thresholds that cannot be watched are refused when none is
// left.
func TestRunEnds(t *testing.T) {
	reg := metrics.NewRegistry()
	metrics.RegisterBuiltin(reg)
	r := newFakeRunner(t)
	r.status.Store(restapi.StatusRunning)
	prom := fakeProm(t, func(string) (float64, bool) { return 5, true })
	go func() {
		time.Sleep(300 * time.Millisecond)
		r.Close() // the runner's process is gone
	}()
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{
		Prometheus: prom.URL, Runners: []string{r.URL}, Registry: reg, Interval: 50 * time.Millisecond, Stdout: &out,
		Thresholds: map[string][]metrics.ThresholdDef{"iterations": {{Source: "count<100", AbortOnFail: true}}},
	})
	if err != nil || len(res.Crossed) != 0 || r.stopped.Load() {
		t.Errorf("%v %+v stopped %v\n%s", err, res, r.stopped.Load(), out.String())
	}
	_, err = Run(context.Background(), Config{
		Prometheus: prom.URL, Runners: []string{r.URL}, Registry: reg, Interval: time.Second, Stdout: &out,
		Thresholds: map[string][]metrics.ThresholdDef{"checks": {{Source: "rate>0.9", AbortOnFail: true}}, "iterations": {{Source: "count<1"}}},
	})
	if err == nil || !strings.Contains(err.Error(), "no abortOnFail threshold can be watched on the union: checks rate>0.9") {
		t.Errorf("nothing to watch: %v", err)
	}
}

// A runner reports its end before it pushes its last samples and exits
// after: the final values are read once it has exited, so they hold that
// last push.
func TestFinalWaitsForTheLastPush(t *testing.T) {
	reg := metrics.NewRegistry()
	metrics.RegisterBuiltin(reg)
	r := newFakeRunner(t)
	r.status.Store(restapi.StatusRunning)
	var pushed atomic.Bool
	prom := fakeProm(t, func(string) (float64, bool) {
		if pushed.Load() {
			return 160, true
		}
		return 120, true
	})
	go func() {
		time.Sleep(200 * time.Millisecond)
		r.status.Store(restapi.StatusEnded)
		time.Sleep(300 * time.Millisecond) // the outputs stop
		pushed.Store(true)
		r.Close()
	}()
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{
		Prometheus: prom.URL, Runners: []string{r.URL}, Registry: reg, Interval: 50 * time.Millisecond, Stdout: &out,
		Thresholds: map[string][]metrics.ThresholdDef{"iterations": {{Source: "count<1000", AbortOnFail: true}}},
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if v := res.Final["iterations: count<1000"]; v != 160 {
		t.Errorf("final count %v, want 160: the last push, made after the runner said it ended\n%s", v, out.String())
	}
	if strings.Contains(out.String(), "still answering") {
		t.Errorf("a runner that exited was reported as answering:\n%s", out.String())
	}
}

// silentServer accepts connections and never answers.
func silentServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// A Prometheus that never answers, or always fails, ends the watch with
// ErrBlind while the test runs, after Blind without an answer, each query
// bounded by QueryTimeout; one that fails until the test ends ends it
// with ErrBlind too, never with the "no threshold crossed" of a watch
// that saw the test through (hostile probe 4, #8: it exited 0).
func TestRunBlind(t *testing.T) {
	reg := metrics.NewRegistry()
	metrics.RegisterBuiltin(reg)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	empty := fakeProm(t, func(string) (float64, bool) { return 0, false })
	thresholds := map[string][]metrics.ThresholdDef{"iterations": {{Source: "count<100", AbortOnFail: true}}}
	for _, c := range []struct {
		name, prom string
		ends       bool // the runner ends after 300 ms
		want       string
	}{
		{"never answers", silentServer(t), false, "answered no query for 1s (the last: no answer within 200ms)"},
		{"always 500", failing.URL, false, "answered no query for 1s (the last: server_error"},
		{"500 to the end", failing.URL, true, "no threshold value was read from " + failing.URL + " during the whole test (the last query failed: server_error"},
		{"no series to the end", empty.URL, true, "Prometheus had no series for them"},
	} {
		r := newFakeRunner(t)
		r.status.Store(restapi.StatusRunning)
		if c.ends {
			go func() {
				time.Sleep(300 * time.Millisecond)
				r.status.Store(restapi.StatusEnded)
				r.Close()
			}()
		}
		blind := time.Second
		if c.ends {
			blind = time.Hour
		}
		var out bytes.Buffer
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := Run(ctx, Config{
			Prometheus: c.prom, Runners: []string{r.URL}, Registry: reg, Thresholds: thresholds, Stdout: &out,
			Interval: 50 * time.Millisecond, Settle: 100 * time.Millisecond, QueryTimeout: 200 * time.Millisecond, Blind: blind,
		})
		cancel()
		if !errors.Is(err, ErrBlind) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrBlind %q\n%s", c.name, err, c.want, out.String())
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: the watch ended after %s", c.name, d)
		}
		if r.stopped.Load() {
			t.Errorf("%s: a blind watch stopped the runner", c.name)
		}
	}
}
