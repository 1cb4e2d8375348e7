package summary

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// groupID is the id k6 gives a group or check: the hex MD5 of its path, so
// the root group ("" path) is d41d8cd98f00b204e9800998ecf8427e.
func groupID(path string) string {
	sum := md5.Sum([]byte(path))
	return hex.EncodeToString(sum[:])
}

// hasSetupData reports whether setup() returned something worth showing.
// Like k6, a null result counts as nothing.
func hasSetupData(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

type exportCheck struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	ID     string `json:"id"`
	Passes int64  `json:"passes"`
	Fails  int64  `json:"fails"`
}

type exportGroup struct {
	Name   string                 `json:"name"`
	Path   string                 `json:"path"`
	ID     string                 `json:"id"`
	Groups map[string]exportGroup `json:"groups"`
	Checks map[string]exportCheck `json:"checks"`
}

type exportDoc struct {
	RootGroup exportGroup               `json:"root_group"`
	Metrics   map[string]map[string]any `json:"metrics"`
	SetupData json.RawMessage           `json:"setup_data,omitempty"`
}

func exportGroupOf(g *Group) exportGroup {
	out := exportGroup{
		Groups: map[string]exportGroup{},
		Checks: map[string]exportCheck{},
	}
	if g == nil {
		out.ID = groupID("")
		return out
	}
	out.Name, out.Path, out.ID = g.Name, g.Path, groupID(g.Path)
	for _, sub := range g.Groups {
		out.Groups[sub.Name] = exportGroupOf(sub)
	}
	for _, c := range g.Checks {
		out.Checks[c.Name] = exportCheck{Name: c.Name, Path: c.Path, ID: groupID(c.Path), Passes: c.Passes, Fails: c.Fails}
	}
	return out
}

// ExportJSON renders the --summary-export file in k6's legacy shape:
//
//	{"root_group": {name, path, id, groups: {name: group}, checks: {name: check}},
//	 "metrics": {name: {stat: number, ..., "thresholds": {expr: bool}}},
//	 "setup_data": ...}
//
// Groups and checks are objects keyed by name (handleSummary gets arrays),
// ids are the MD5 of the path, a Rate's fraction is called "value" (it is
// "rate" in handleSummary), and setup_data is present only when setup()
// returned something.
//
// The threshold booleans are inverted: true means the threshold FAILED.
// k6 has always written them that way (grafana/k6#1498) and tools that read
// the file depend on it, so metronome keeps the quirk.
func ExportJSON(in *Input) ([]byte, error) {
	if in == nil {
		return nil, errors.New("summary: no input")
	}
	doc := exportDoc{
		RootGroup: exportGroupOf(in.RootGroup),
		Metrics:   make(map[string]map[string]any, len(in.Metrics)),
	}
	stats := trendStats(in.Options)
	for i := range in.Metrics {
		m := &in.Metrics[i]
		vals := metricValues(m, stats, in.State.TestRunDuration)
		obj := make(map[string]any, len(vals)+1)
		for _, s := range vals {
			key := s.key
			if key == "rate" && metricType(m) == "rate" {
				key = "value"
			}
			obj[key] = jsonNumber(s.v)
		}
		if len(m.Thresholds) > 0 {
			th := make(map[string]bool, len(m.Thresholds))
			for _, t := range m.Thresholds {
				th[t.Source] = !t.OK
			}
			obj["thresholds"] = th
		}
		doc.Metrics[m.Name] = obj
	}
	if hasSetupData(in.SetupData) {
		if !json.Valid(in.SetupData) {
			return nil, errors.New("summary: the data setup() returned is not valid JSON")
		}
		doc.SetupData = in.SetupData
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "p(95)<500" readable
	enc.SetIndent("", "    ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	return buf.Bytes(), nil
}

func dataGroupOf(g *Group) map[string]any {
	groups, checks := []any{}, []any{}
	name, path := "", ""
	if g != nil {
		name, path = g.Name, g.Path
		for _, sub := range g.Groups {
			groups = append(groups, dataGroupOf(sub))
		}
		for _, c := range g.Checks {
			checks = append(checks, map[string]any{
				"name": c.Name, "path": c.Path, "id": groupID(c.Path),
				"passes": c.Passes, "fails": c.Fails,
			})
		}
	}
	return map[string]any{
		"name": name, "path": path, "id": groupID(path),
		"groups": groups, "checks": checks,
	}
}

// Data builds the object a script's handleSummary(data) receives, in k6's
// shape:
//
//	root_group  {name, path, id, groups: [group], checks: [{name, path, id, passes, fails}]}
//	options     {summaryTrendStats, summaryTimeUnit, noColor}
//	state       {isStdOutTTY, isStdErrTTY, testRunDurationMs}
//	metrics     {name: {type, contains, values: {...}, thresholds?: {expr: {ok}}}}
//	setup_data  what setup() returned, decoded (absent when nothing)
//
// Trend values are the summaryTrendStats; a counter has count and rate; a
// gauge value, min and max; a Rate rate, passes and fails.
//
// metronome adds one key k6 does not have:
//
//	metronome   {scenarios: [{name, executor, intended, onTime, late, lateForVU,
//	             dropped, interrupted, peakBacklog, rawP99, rawMetric, correctedP99}],
//	             backFills: [{name, executor, expectedInterval, estimated,
//	             requests, backfilled, unestimated, vus, cadenceMedian,
//	             cadenceMin, cadenceMax, rawP99, rawMetric, iterationP99, correctedP99}],
//	             endpoints: [{name, requests, rawMetric, raw, corrected}],
//	             windows: [{metric, threshold, windowMs, ok, judged, failed,
//	             failing: [{fromMs, toMs}], worst: {fromMs, toMs, value}, late}],
//	             capacity: [{name, objective, limit, capacity, failedAt,
//	             verdict, steps: [{rate, objective, correctedP50,
//	             correctedP99, rawP50, rawP99, errorRate, cpu, schedP99,
//	             verdict, why}]}],
//	             health: {intervalMs, intervals, limited, reasons: [{reason,
//	             intervals}], procs, cpuMedian, cpuMax, schedP99Median,
//	             schedP99Max, gcPauseMax, arrivals, lateWakeup, lateForVU},
//	             warnings: [string]}
//
// holding the per-scenario arrival account of open-model scenarios, the
// back-fill account of closed-model scenarios that back-fill
// corrected_latency, each request name's raw and corrected p(50), p(99)
// and p(99.9) (raw from rawMetric, absent when the name recorded none;
// times in milliseconds), how the windows of each windowed threshold went
// (offsets from the run's start in milliseconds; the threshold's ok is
// also under metrics, in k6's shape), the capacity searches (rates per
// second), the generator's health (absent when it was not measured) and
// the warnings the text summary prints. Every object is a
// map[string]any and every array a []any, so the value converts directly
// to JavaScript or JSON.
func Data(in *Input) map[string]any {
	if in == nil {
		in = &Input{}
	}
	stats := trendStats(in.Options)
	statList := make([]any, len(stats))
	for i, s := range stats {
		statList[i] = s
	}
	ms := make(map[string]any, len(in.Metrics))
	for i := range in.Metrics {
		m := &in.Metrics[i]
		vals := map[string]any{}
		for _, s := range metricValues(m, stats, in.State.TestRunDuration) {
			vals[s.key] = jsonNumber(s.v)
		}
		obj := map[string]any{
			"type":     metricType(m),
			"contains": metricContains(m).String(),
			"values":   vals,
		}
		if len(m.Thresholds) > 0 {
			th := make(map[string]any, len(m.Thresholds))
			for _, t := range m.Thresholds {
				th[t.Source] = map[string]any{"ok": t.OK}
			}
			obj["thresholds"] = th
		}
		ms[m.Name] = obj
	}
	scenarios := make([]any, 0, len(in.Scenarios))
	for _, s := range in.Scenarios {
		scenarios = append(scenarios, map[string]any{
			"name": s.Name, "executor": s.Executor,
			"intended": s.Intended, "onTime": s.OnTime, "late": s.Late, "lateForVU": s.LateForVU,
			"dropped": s.Dropped, "interrupted": s.Interrupted,
			"peakBacklog":  s.PeakBacklog,
			"rawP99":       jsonNumber(s.RawP99),
			"rawMetric":    rawMetric(s.RawMetric),
			"correctedP99": jsonNumber(s.CorrectedP99),
		})
	}
	endpoints := make([]any, 0, len(in.Endpoints))
	for _, e := range in.Endpoints {
		pct := func(p Percentiles) map[string]any {
			return map[string]any{"p(50)": jsonNumber(p.P50), "p(99)": jsonNumber(p.P99), "p(99.9)": jsonNumber(p.P999)}
		}
		ep := map[string]any{"name": e.Name, "requests": e.Requests, "corrected": pct(e.Corrected)}
		if e.RawMetric != "" {
			ep["rawMetric"], ep["raw"] = e.RawMetric, pct(e.Raw)
		}
		endpoints = append(endpoints, ep)
	}
	fills := make([]any, 0, len(in.BackFills))
	for _, s := range in.BackFills {
		fills = append(fills, map[string]any{
			"name": s.Name, "executor": s.Executor,
			"expectedInterval": s.ExpectedInterval, "estimated": s.Estimated,
			"requests": s.Requests, "backfilled": s.Backfilled, "unestimated": s.Unestimated,
			"vus":           int64(s.VUs),
			"cadenceMedian": jsonNumber(s.CadenceMedian),
			"cadenceMin":    jsonNumber(s.CadenceMin),
			"cadenceMax":    jsonNumber(s.CadenceMax),
			"rawP99":        jsonNumber(s.RawP99),
			"rawMetric":     rawMetric(s.RawMetric),
			"iterationP99":  jsonNumber(s.IterationP99),
			"correctedP99":  jsonNumber(s.CorrectedP99),
		})
	}
	warnings := make([]any, len(in.Warnings))
	for i, w := range in.Warnings {
		warnings[i] = w
	}
	ms2 := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	windows := []any{}
	for _, m := range in.Metrics {
		for _, t := range m.Thresholds {
			if t.Window == 0 {
				continue
			}
			w := t.Windows
			failing := make([]any, len(w.Failing))
			for i, s := range w.Failing {
				failing[i] = map[string]any{"fromMs": ms2(s.From), "toMs": ms2(s.To)}
			}
			windows = append(windows, map[string]any{
				"metric": m.Name, "threshold": t.Source, "windowMs": ms2(t.Window), "ok": t.OK,
				"judged": int64(w.Judged), "failed": int64(w.Failed), "failing": failing,
				"worst": map[string]any{"fromMs": ms2(w.Worst.From), "toMs": ms2(w.Worst.To), "value": jsonNumber(w.Value)},
				"late":  w.Late,
			})
		}
	}
	mt := map[string]any{"scenarios": scenarios, "backFills": fills, "endpoints": endpoints, "windows": windows, "warnings": warnings}
	if len(in.Capacity) > 0 {
		caps := make([]any, len(in.Capacity))
		for i, c := range in.Capacity {
			steps := make([]any, len(c.Steps))
			for j, st := range c.Steps {
				steps[j] = map[string]any{
					"rate": jsonNumber(st.Rate), "objective": jsonNumber(st.Objective),
					"correctedP50": jsonNumber(st.CorrectedP50), "correctedP99": jsonNumber(st.CorrectedP99),
					"rawP50": jsonNumber(st.RawP50), "rawP99": jsonNumber(st.RawP99),
					"errorRate": jsonNumber(st.ErrorRate), "cpu": jsonNumber(st.CPU), "schedP99": jsonNumber(st.SchedP99),
					"verdict": st.Verdict, "why": st.Why,
				}
			}
			caps[i] = map[string]any{"name": c.Name, "objective": c.Objective, "limit": c.Limit,
				"capacity": jsonNumber(c.Capacity), "failedAt": jsonNumber(c.FailedAt), "verdict": c.Verdict, "steps": steps}
		}
		mt["capacity"] = caps
	}
	if h := in.Health; h != nil {
		reasons := make([]any, len(h.Reasons))
		for i, rs := range h.Reasons {
			reasons[i] = map[string]any{"reason": rs.Reason, "intervals": int64(rs.Intervals)}
		}
		mt["health"] = map[string]any{
			"intervalMs": ms2(h.Interval),
			"intervals":  int64(h.Intervals), "limited": int64(h.Limited), "reasons": reasons,
			"procs": int64(h.Procs), "cpuMedian": jsonNumber(h.CPUMedian), "cpuMax": jsonNumber(h.CPUMax),
			"schedP99Median": jsonNumber(h.SchedP99Median), "schedP99Max": jsonNumber(h.SchedP99Max),
			"gcPauseMax": jsonNumber(h.GCPauseMax),
			"arrivals":   h.Arrivals, "lateWakeup": h.LateWakeup, "lateForVU": h.LateForVU,
		}
	}
	out := map[string]any{
		"root_group": dataGroupOf(in.RootGroup),
		"options": map[string]any{
			"summaryTrendStats": statList,
			"summaryTimeUnit":   in.Options.TimeUnit,
			"noColor":           in.Options.NoColor,
		},
		"state": map[string]any{
			"isStdOutTTY":       in.State.IsStdOutTTY,
			"isStdErrTTY":       in.State.IsStdErrTTY,
			"testRunDurationMs": float64(in.State.TestRunDuration) / float64(time.Millisecond),
		},
		"metrics":   ms,
		"metronome": mt,
	}
	if hasSetupData(in.SetupData) {
		var v any
		if json.Unmarshal(in.SetupData, &v) == nil {
			out["setup_data"] = v
		}
	}
	return out
}
