package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/exitcode"
)

// latencyTrends comes, like every option, from the script, then
// K6_LATENCY_TRENDS, then --latency-trends (repeatable, or
// comma-separated); a higher tier replaces the list.
func TestLatencyTrendsPrecedence(t *testing.T) {
	for _, c := range []struct {
		script string
		env    map[string]string
		args   []string
		want   []string
	}{
		{`{"latencyTrends": ["redis_duration"]}`, nil, nil, []string{"redis_duration"}},
		{`{"latencyTrends": ["redis_duration"]}`, map[string]string{"K6_LATENCY_TRENDS": "sql_duration,kafka_duration"}, nil, []string{"sql_duration", "kafka_duration"}},
		{`{"latencyTrends": ["redis_duration"]}`, map[string]string{"K6_LATENCY_TRENDS": "sql_duration"}, []string{"--latency-trends", "a_time,b_time", "--latency-trends", "c_time"}, []string{"a_time", "b_time", "c_time"}},
		{`{}`, nil, nil, nil},
	} {
		h := newHarness(t, c.script)
		args := append(append([]string{"run", "-q"}, c.args...), "script.js")
		if code, _, stderr := h.run(c.env, args...); code != 0 {
			t.Fatalf("%v %v: exit code %d: %s", c.env, c.args, code, stderr)
		}
		if got := h.ran.Options.LatencyTrends; !slices.Equal(got, c.want) {
			t.Errorf("script %s, env %v, flags %v: latencyTrends %q, want %q", c.script, c.env, c.args, got, c.want)
		}
	}
}

// What can be checked before the script runs is checked with the other
// options: a name, not a selector, and not a built-in metric (the
// built-in protocols record corrected_latency themselves).
func TestLatencyTrendsErrors(t *testing.T) {
	for _, c := range []struct {
		script string
		env    map[string]string
		args   []string
		want   string
	}{
		{`{"latencyTrends": ["redis_duration", "http_req_duration"]}`, nil, nil,
			`options.latencyTrends[1]: "http_req_duration" already records corrected_latency: k6/http, gRPC and WebSocket connects record it for each request themselves; name the custom Trend a script or an extension times its own operations with (in script options)`},
		{`{"latencyTrends": ["ws_connecting"]}`, nil, nil, `options.latencyTrends[0]: "ws_connecting" already records corrected_latency`},
		{`{"latencyTrends": ["iteration_duration"]}`, nil, nil,
			`options.latencyTrends[0]: "iteration_duration" is a built-in metric, not an operation's own time`},
		{`{"latencyTrends": ["corrected_latency"]}`, nil, nil, `options.latencyTrends[0]: "corrected_latency" is a built-in metric`},
		{`{"latencyTrends": ["redis_duration{op:get}"]}`, nil, nil,
			`options.latencyTrends[0]: "redis_duration{op:get}" is not a metric name: name the whole Trend, without a tag selector (in script options)`},
		{`{"latencyTrends": "redis_duration"}`, nil, nil, `options.latencyTrends: expected an array of strings, got "redis_duration" (in script options)`},
		{"", map[string]string{"K6_LATENCY_TRENDS": "redis-duration"}, nil, `K6_LATENCY_TRENDS: "redis-duration" is not a metric name`},
		{"", nil, []string{"--latency-trends", "ok_time,http_req_waiting"}, `"--latency-trends" flag: "http_req_waiting" is a built-in metric`},
	} {
		h := newHarness(t, c.script)
		args := append(append([]string{"run"}, c.args...), "script.js")
		code, _, stderr := h.run(c.env, args...)
		if code != exitcode.InvalidConfig || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s %v %v: exit code %d, stderr %q; want 104 and one line containing %q", c.script, c.env, c.args, code, stderr, c.want)
		}
	}
}

// metronome audit takes latencyTrends from the script's options like the
// run does, and the flag over them: a stock k6 run's op_duration samples
// are then charged as requests, under corrected_latency{metric:...}.
func TestAuditTakesLatencyTrends(t *testing.T) {
	// k6's JSON output of 10 arrivals/s for 1 s on one VU, each iteration
	// one 5 ms operation timed by op_duration.
	var out strings.Builder
	decl := func(name, typ, contains string) {
		fmt.Fprintf(&out, `{"type":"Metric","data":{"name":%q,"type":%q,"contains":%q,"thresholds":[],"submetrics":null},"metric":%q}`+"\n", name, typ, contains, name)
	}
	point := func(metric string, at time.Time, v float64, iter int) {
		fmt.Fprintf(&out, `{"metric":%q,"type":"Point","data":{"time":%q,"value":%v,"tags":{"scenario":"ops"},"metadata":{"vu":"1","iter":"%d"}}}`+"\n",
			metric, at.UTC().Format(time.RFC3339Nano), v, iter)
	}
	decl("op_duration", "trend", "time")
	decl("iteration_duration", "trend", "time")
	decl("iterations", "counter", "default")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		start := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		end := start.Add(5 * time.Millisecond)
		point("op_duration", end, 5, i)
		point("iteration_duration", end, 5, i)
		point("iterations", end, 1, i)
	}
	output := writeFile(t, "out.json", out.String())
	const opts = `{"scenarios": {"ops": {"executor": "constant-arrival-rate", "rate": 10, "timeUnit": "1s", "duration": "1s", "preAllocatedVUs": 1}}%s}`
	for _, c := range []struct {
		options string
		args    []string
		want    bool
	}{
		{fmt.Sprintf(opts, `, "latencyTrends": ["op_duration"]`), nil, true},
		{fmt.Sprintf(opts, ""), []string{"--latency-trends", "op_duration"}, true},
		{fmt.Sprintf(opts, ""), nil, false},
	} {
		h := newHarness(t, c.options)
		args := append(append([]string{"audit"}, c.args...), output, "script.js")
		code, stdout, stderr := h.run(nil, args...)
		if code != 0 {
			t.Fatalf("%s %v: exit %d\n%s%s", c.options, c.args, code, stdout, stderr)
		}
		var line string
		for _, l := range strings.Split(stdout, "\n") {
			if strings.Contains(l, "{ metric:op_duration }") {
				line = l
			}
		}
		if got := strings.Contains(line, "max=5ms"); got != c.want {
			t.Errorf("%s %v: corrected_latency { metric:op_duration } line %q, want it (5 ms operations on time): %v\n%s", c.options, c.args, line, c.want, stdout)
		}
	}
}
