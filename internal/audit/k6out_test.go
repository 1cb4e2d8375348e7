package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// k6Output writes JSON output as k6 v2.2.0 writes it (recorded in
// testdata/k6-*.json.gz): a Metric line before each metric's first
// Point, times in RFC 3339 with nanoseconds, values in milliseconds, tags
// as an object and vu and iter as metadata when meta is set.
type k6Output struct {
	b        bytes.Buffer
	declared map[string]bool
	meta     bool
	// op, when set, makes request write each request as one sample of
	// this custom Trend of time, tagged op=GET, as a script or an
	// extension times an operation of its own: no k6/http sample.
	op string
}

func newK6Output(meta bool) *k6Output { return &k6Output{declared: map[string]bool{}, meta: meta} }

// kinds are the built-in metrics' type and contents, as k6 declares them.
var kinds = map[string][2]string{
	"http_reqs": {"counter", "default"}, "http_req_duration": {"trend", "time"}, "http_req_blocked": {"trend", "time"},
	"http_req_failed": {"rate", "default"}, "iteration_duration": {"trend", "time"}, "iterations": {"counter", "default"},
	"dropped_iterations": {"counter", "default"}, "data_sent": {"counter", "data"}, "checks": {"rate", "default"},
	"op_duration": {"trend", "time"}, "op_size": {"trend", "default"},
}

func (o *k6Output) point(metric string, at time.Time, value float64, tags map[string]string, vu, iter int) {
	if !o.declared[metric] {
		o.declared[metric] = true
		k := kinds[metric]
		fmt.Fprintf(&o.b, `{"type":"Metric","data":{"name":%q,"type":%q,"contains":%q,"thresholds":[],"submetrics":null},"metric":%q}`+"\n", metric, k[0], k[1], metric)
	}
	data := map[string]any{"time": at.UTC().Format(time.RFC3339Nano), "value": value, "tags": tags}
	if o.meta && vu > 0 {
		data["metadata"] = map[string]string{"vu": fmt.Sprint(vu), "iter": fmt.Sprint(iter)}
	}
	line, err := json.Marshal(map[string]any{"metric": metric, "type": "Point", "data": data})
	if err != nil {
		panic(err)
	}
	o.b.Write(append(line, '\n'))
}

// request writes one k6/http request of its own time own (blocked 20 µs
// of it), answered at end, and returns end.
func (o *k6Output) request(end time.Time, own time.Duration, scenario, name string, vu, iter int) {
	if o.op != "" {
		o.point(o.op, end, metrics.Milliseconds(own), map[string]string{"scenario": scenario, "op": "GET"}, vu, iter)
		return
	}
	tags := map[string]string{"scenario": scenario, "name": name, "method": "GET", "status": "200"}
	blocked := 20 * time.Microsecond
	o.point("http_reqs", end, 1, tags, vu, iter)
	o.point("http_req_duration", end, metrics.Milliseconds(own-blocked), tags, vu, iter)
	o.point("http_req_blocked", end, metrics.Milliseconds(blocked), tags, vu, iter)
	o.point("http_req_failed", end, 0, tags, vu, iter)
}

// iteration writes the end of an iteration that ran from start to end.
func (o *k6Output) iteration(start, end time.Time, scenario string, vu, iter int) {
	tags := map[string]string{"scenario": scenario}
	o.point("data_sent", end, 71, tags, vu, iter)
	o.point("iteration_duration", end, metrics.Milliseconds(end.Sub(start)), tags, vu, iter)
	o.point("iterations", end, 1, tags, vu, iter)
}

// dropped writes one dropped arrival.
func (o *k6Output) dropped(at time.Time, scenario string) {
	o.point("dropped_iterations", at, 1, map[string]string{"scenario": scenario}, 0, 0)
}

// scenarios parses options JSON into the run's scenarios.
func scenarios(t testing.TB, options string) []executor.Config {
	t.Helper()
	o, err := config.Parse([]byte(options), "test options")
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := config.Scenarios(o)
	if err != nil {
		t.Fatal(err)
	}
	return cfgs
}

// frozen is docs/DESIGN.md §7's frozen server in milliseconds from t0: it
// answers a request sent at sent after 10 ms of service, and one sent
// while it is frozen (1000–1500 ms) 10 ms after the freeze.
func frozen(sent float64) float64 {
	if sent >= 1000 && sent < 1500 {
		return 1510
	}
	return sent + 10
}

// at is t0 plus ms milliseconds.
func at(t0 time.Time, ms float64) time.Time {
	return t0.Add(time.Duration(math.Round(ms * float64(time.Millisecond))))
}
