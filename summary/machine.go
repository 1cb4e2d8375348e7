package summary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// MachineVersion is the version of k6's machine-readable summary schema
// that MachineReadable writes (the "version" key).
const MachineVersion = "1.0.0"

// MachineK6Version is the "k6_version" MachineReadable writes: the k6
// release whose summary metronome reproduces. The schema has no key for
// another program's version, and its strict readers refuse unknown keys.
const MachineK6Version = "2.2.0"

// Meta is what the machine-readable summary says of the run beyond its
// metrics: the main script's source as read from disk and when the
// summary was made.
type Meta struct {
	Script      string
	GeneratedAt time.Time
}

// machineTrendStats are the trend stats the schema has, each under its
// key: a summaryTrendStats entry that is not among them is left out, and
// one of them that summaryTrendStats lacks is null.
var machineTrendStats = []struct{ stat, key string }{
	{"avg", "avg"}, {"max", "max"}, {"med", "med"}, {"min", "min"}, {"p(90)", "p90"}, {"p(95)", "p95"},
}

// machineSkipped are the name prefixes k6 leaves out of the machine-readable
// metrics: checks (which have their own section) and group_duration
// always, and in compact mode the HTTP timing parts. k6 matches them as
// prefixes, so their submetrics (and a custom "checks_x") go too.
func machineSkipped(mode, name string) bool {
	prefixes := []string{"checks", "group_duration"}
	if mode != "full" {
		prefixes = append(prefixes, "http_req_blocked", "http_req_connecting", "http_req_receiving",
			"http_req_sending", "http_req_tls_handshaking", "http_req_waiting")
	}
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// machineSection is the rank of the section k6 files a metric under, the
// order of the machine-readable metrics list: HTTP, execution, network,
// browser, web vitals, gRPC, WebSocket, then everything else (custom
// metrics and metronome's own). k6 matches names as prefixes here too.
func machineSection(name string) int {
	has := func(ps ...string) bool {
		for _, p := range ps {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("http_reqs", "http_req_failed", "http_req_duration", "http_req_blocked", "http_req_connecting",
		"http_req_tls_handshaking", "http_req_sending", "http_req_waiting", "http_req_receiving"):
		return 0
	case has("vus", "vus_max", "iterations", "iteration_duration", "dropped_iterations"):
		return 1
	case has("data_sent", "data_received"):
		return 2
	case has("browser_web_vital_"):
		return 4
	case has("browser_"):
		return 3
	case has("grpc_"):
		return 5
	case has("ws_"):
		return 6
	}
	return 7
}

// machineMetric is one metric in the schema's shape: {contains, name,
// type, values}, values by type: a counter's count; a gauge's max, min and
// value; a rate's matches, rate and total; a trend's six stats.
func machineMetric(name, typ, contains string, values map[string]any) map[string]any {
	return map[string]any{"contains": contains, "name": name, "type": typ, "values": values}
}

func (in *Input) machineValues(m *Metric) map[string]any {
	vals := map[string]float64{}
	for _, s := range metricValues(m, trendStats(in.Options), in.State.TestRunDuration) {
		vals[s.key] = s.v
	}
	switch metricType(m) {
	case "counter":
		return map[string]any{"count": jsonNumber(vals["count"])}
	case "gauge":
		return map[string]any{"max": jsonNumber(vals["max"]), "min": jsonNumber(vals["min"]), "value": jsonNumber(vals["value"])}
	case "rate":
		passes, fails := vals["passes"], vals["fails"]
		return map[string]any{"matches": int64(passes), "rate": jsonNumber(vals["rate"]), "total": int64(passes + fails)}
	}
	out := make(map[string]any, len(machineTrendStats))
	for _, ts := range machineTrendStats {
		out[ts.key] = nil
		if v, ok := vals[ts.stat]; ok {
			out[ts.key] = jsonNumber(v)
		}
	}
	return out
}

// machineChecks is the checks section: the checks metrics and every check
// by name, a name used in several groups counted once, in order of first
// appearance. Without the checks metric both lists are empty.
func (in *Input) machineChecks() map[string]any {
	list, results := []any{}, []any{}
	var checks *Metric
	for i := range in.Metrics {
		if in.Metrics[i].Name == "checks" {
			checks = &in.Metrics[i]
		}
	}
	if checks != nil {
		var passes, fails int64
		for _, s := range metricValues(checks, nil, in.State.TestRunDuration) {
			switch s.key {
			case "passes":
				passes = int64(s.v)
			case "fails":
				fails = int64(s.v)
			}
		}
		total := passes + fails
		failRate := 0.0
		if total > 0 {
			failRate = float64(fails) / float64(total)
		}
		list = append(list,
			machineMetric("checks_total", "counter", "default", map[string]any{"count": float64(total)}),
			machineMetric("checks_failed", "rate", "default", map[string]any{"matches": fails, "rate": failRate, "total": total}),
			machineMetric("checks_succeeded", "rate", "default", in.machineValues(checks)))
		byName := map[string]map[string]any{}
		for _, c := range in.Checks {
			r := byName[c.Name]
			if r == nil {
				r = map[string]any{"name": c.Name, "passes": int64(0), "fails": int64(0)}
				byName[c.Name] = r
				results = append(results, r)
			}
			r["passes"] = r["passes"].(int64) + c.Passes
			r["fails"] = r["fails"].(int64) + c.Fails
		}
	}
	return map[string]any{"metrics": list, "results": results}
}

// MachineReadable builds k6's versioned machine-readable summary
// (--new-machine-readable-summary, schema MachineVersion):
//
//	config    {duration (seconds), execution: "local", script (the main script's source)}
//	metadata  {generated_at, k6_version}
//	results   {checks: {metrics: [checks_total, checks_failed, checks_succeeded],
//	           results: [{fails, name, passes}]},
//	           metrics: [{contains, name, type, values}]}
//	version   "1.0.0"
//
// It holds the whole run's metrics only: no thresholds, groups or
// scenarios, as in k6. metronome's own metrics (corrected_latency,
// schedule_lag, generator_*) are listed like custom ones, and its own
// accounts are left out, since the schema's readers refuse unknown keys.
// Every object is a map[string]any and every array a []any, so the value
// converts directly to JavaScript or JSON; encoding/json writes the keys
// in the order k6 does (alphabetical).
func MachineReadable(in *Input, meta Meta) map[string]any {
	if in == nil {
		in = &Input{}
	}
	idx := make([]int, 0, len(in.Metrics))
	for i := range in.Metrics {
		if !machineSkipped(in.Options.Mode, in.Metrics[i].Name) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ma, mb := in.Metrics[idx[a]].Name, in.Metrics[idx[b]].Name
		if sa, sb := machineSection(ma), machineSection(mb); sa != sb {
			return sa < sb
		}
		return ma < mb
	})
	list := make([]any, 0, len(idx))
	for _, i := range idx {
		m := &in.Metrics[i]
		list = append(list, machineMetric(m.Name, metricType(m), metricContains(m).String(), in.machineValues(m)))
	}
	return map[string]any{
		"config": map[string]any{
			"duration":  in.State.TestRunDuration.Seconds(),
			"execution": "local",
			"script":    meta.Script,
		},
		"metadata": map[string]any{
			"generated_at": meta.GeneratedAt.Format(time.RFC3339Nano),
			"k6_version":   MachineK6Version,
		},
		"results": map[string]any{
			"checks":  in.machineChecks(),
			"metrics": list,
		},
		"version": MachineVersion,
	}
}

// MachineReadableJSON renders MachineReadable as the --summary-export file
// k6 writes with the flag: indented by four spaces, with no line break at
// the end.
func MachineReadableJSON(in *Input, meta Meta) ([]byte, error) {
	if in == nil {
		return nil, errors.New("summary: no input")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	if err := enc.Encode(MachineReadable(in, meta)); err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
