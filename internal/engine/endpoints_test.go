package engine

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// endpointsScript's iterations send two named requests with think time
// between and after them: "login" takes 2 ms, or waits for the end of the
// freeze [from, to) when sent inside it; "home" takes 1 ms. Each request
// records k6's http_req_duration and its corrected_latency through the
// iteration's Latency, as k6/http does. With noRequests the iterations
// only think.
type endpointsScript struct {
	*fakeScript
	from, to   time.Time
	noRequests bool
}

func (f *endpointsScript) NewVU(_ context.Context, id uint64, rec metrics.Recorder) (executor.VU, error) {
	return &endpointsVU{fakeVU: fakeVU{id: id, rec: rec, s: f.fakeScript}, script: f}, nil
}

type endpointsVU struct {
	fakeVU
	script *endpointsScript
}

func (v *endpointsVU) Run(_ context.Context, it executor.Iteration) executor.Result {
	start := time.Now()
	lat := it.Latency(start)
	base := metrics.EmptyTags.With("scenario", it.Scenario.Name)
	request := func(name string, d time.Duration) {
		sent := time.Now()
		if name == "login" && !sent.Before(v.script.from) && sent.Before(v.script.to) {
			d += v.script.to.Sub(sent)
		}
		time.Sleep(d)
		tags := base.With("name", name)
		v.rec.Record(metrics.Sample{Metric: v.s.b.HTTPReqDuration, Tags: tags, Time: time.Now(), Value: metrics.Milliseconds(d)})
		lat.Record(v.rec, v.s.b.CorrectedLatency, tags, time.Now(), d)
	}
	if !v.script.noRequests {
		request("login", 2*time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if !v.script.noRequests {
		request("home", time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond)
	return executor.Result{Outcome: executor.Completed, Start: start, End: time.Now(), Tags: base}
}

// An open model at 20/s for 10 s with enough VUs, against a login that
// freezes for 1 s: corrected_latency{name:login} selects exactly the
// login requests (a threshold on it fails, one on home passes), the sleeps
// are in no value (home's corrected p99 is its 1 ms), and the summary's
// per-endpoint table and handleSummary's data show login's stall against
// its raw figures.
func TestEndpointsPerRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := &endpointsScript{fakeScript: &fakeScript{}, from: t0.Add(3 * time.Second), to: t0.Add(4 * time.Second)}
		err, out, export := runFake(t, context.Background(), s.fakeScript, `{
			"scenarios": {"api": {"executor": "intended-arrival-rate", "rate": 20, "duration": "10s", "preAllocatedVUs": 40}},
			"thresholds": {"corrected_latency{name:login}": ["p(99)<100"], "corrected_latency{name:home}": ["max<=1"]},
			"summaryTrendStats": ["count", "med", "p(99)", "max"]
		}`, func(c *Config) { c.Script = s })
		if err == nil || !strings.Contains(err.Error(), "threshold") {
			t.Fatalf("run error %v, want the login threshold to fail\n%s", err, out)
		}
		if got := metricValue(t, export, "corrected_latency{name:home}", "max"); got != 1 {
			t.Errorf("home's corrected max %v ms, want its 1 ms: think time is not latency", got)
		}
		if got := metricValue(t, export, "corrected_latency{name:login}", "count"); got != 200 {
			t.Errorf("%v login samples, want the 200 arrivals' logins", got)
		}
		// The 20 logins sent in the freeze wait 50 ms to 1 s (one every
		// 50 ms): the p99 of 200 is the third largest, 850–950 ms as the
		// arrivals fall against the freeze's edges. Raw, home never
		// waits, and the sleeps add to neither.
		if got := metricValue(t, export, "corrected_latency{name:login}", "p(99)"); got < 850 || got > 960 {
			t.Errorf("login's corrected p99 %v ms, want the freeze's 850–950", got)
		}
		eps := s.summary["metronome"].(map[string]any)["endpoints"].([]any)
		if len(eps) != 2 || eps[0].(map[string]any)["name"] != "home" || eps[1].(map[string]any)["name"] != "login" {
			t.Fatalf("endpoints %v, want home and login", eps)
		}
		login := eps[1].(map[string]any)
		if login["requests"] != int64(200) || login["rawMetric"] != "http_req_duration" {
			t.Errorf("login endpoint %v", login)
		}
		for _, want := range []string{"█ ENDPOINTS", "    login ", "    home "} {
			if !strings.Contains(out, want) {
				t.Errorf("summary lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "made no request") {
			t.Errorf("the no-request warning for a scenario that made requests:\n%s", out)
		}
	})
}

// An open-model scenario whose iterations make no request records no
// corrected_latency (only schedule_lag), and the summary says so.
func TestNoRequestWarning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &endpointsScript{fakeScript: &fakeScript{}, noRequests: true}
		err, out, export := runFake(t, context.Background(), s.fakeScript, `{
			"scenarios": {"quiet": {"executor": "constant-arrival-rate", "rate": 10, "duration": "2s", "preAllocatedVUs": 2}},
			"summaryTrendStats": ["count", "max"]
		}`, func(c *Config) { c.Script = s })
		if err != nil {
			t.Fatalf("run failed: %v\n%s", err, out)
		}
		if _, ok := export["metrics"].(map[string]any)["corrected_latency"]; ok {
			t.Errorf("corrected_latency recorded without a request")
		}
		if got := metricValue(t, export, "schedule_lag", "count"); got != 20 {
			t.Errorf("schedule_lag count %v, want 20", got)
		}
		if !strings.Contains(out, "scenario quiet: its iterations made no request that records corrected_latency") {
			t.Errorf("summary lacks the warning:\n%s", out)
		}
	})
}
