package summary

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/metronome-load/metronome/internal/columns"
	"github.com/metronome-load/metronome/metrics"
)

// ANSI colours for the marks; nothing else is coloured.
const (
	ansiGreen  = "\x1b[32m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)

// Metric categories, in the order they are printed. CorrectedLatency is
// metronome's: corrected_latency and schedule_lag, placed right after HTTP
// so that raw and corrected latency are read together.
const (
	catCustom           = "CUSTOM"
	catHTTP             = "HTTP"
	catCorrectedLatency = "CORRECTED LATENCY"
	catExecution        = "EXECUTION"
	catGenerator        = "GENERATOR"
	catNetwork          = "NETWORK"
	catBrowser          = "BROWSER"
	catWebVitals        = "WEB_VITALS"
	catGRPC             = "GRPC"
	catWebSocket        = "WEBSOCKET"
)

var categoryOrder = []string{
	catCustom, catHTTP, catCorrectedLatency, catExecution, catGenerator, catNetwork,
	catBrowser, catWebVitals, catGRPC, catWebSocket,
}

// category files a metric under its summary section. Only built-in names
// leave CUSTOM, so a script's own "http_foo" stays with the custom metrics.
func category(name string) string {
	switch name {
	case metrics.HTTPReqsName, metrics.HTTPReqFailedName, metrics.HTTPReqDurationName,
		metrics.HTTPReqBlockedName, metrics.HTTPReqConnectingName, metrics.HTTPReqTLSHandshakingName,
		metrics.HTTPReqSendingName, metrics.HTTPReqWaitingName, metrics.HTTPReqReceivingName:
		return catHTTP
	case metrics.CorrectedLatencyName, metrics.ScheduleLagName:
		return catCorrectedLatency
	case metrics.IterationsName, metrics.IterationDurationName, metrics.DroppedIterationsName,
		metrics.VUsName, metrics.VUsMaxName, metrics.CapacitySearchRateName:
		return catExecution
	case metrics.GeneratorCPUName, metrics.GeneratorSchedLatencyName, metrics.GeneratorGCPauseName,
		metrics.GeneratorLateWakeupName, metrics.GeneratorLateForVUName, metrics.GeneratorLimitedName:
		return catGenerator
	case metrics.DataSentName, metrics.DataReceivedName:
		return catNetwork
	}
	switch {
	case strings.HasPrefix(name, "browser_web_vital_"):
		return catWebVitals
	case strings.HasPrefix(name, "browser_"):
		return catBrowser
	case strings.HasPrefix(name, "grpc_"):
		return catGRPC
	case strings.HasPrefix(name, "ws_"):
		return catWebSocket
	}
	return catCustom
}

// Metrics left out of the metric listing. The match is on the name PREFIX,
// as in k6: besides the built-ins it also hides a custom metric such as
// "checks_foo" or "http_req_waiting_db" and every submetric of the hidden
// ones. Thresholds on hidden metrics are still shown.
var (
	hiddenAlways  = []string{metrics.ChecksName, metrics.GroupDurationName}
	hiddenCompact = []string{
		metrics.GeneratorPrefix,
		metrics.HTTPReqBlockedName, metrics.HTTPReqConnectingName, metrics.HTTPReqTLSHandshakingName,
		metrics.HTTPReqSendingName, metrics.HTTPReqWaitingName, metrics.HTTPReqReceivingName,
	}
)

func hidden(name string, full bool) bool {
	for _, p := range hiddenAlways {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	if full {
		return false
	}
	for _, p := range hiddenCompact {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// BackfilledTag is the tag the executors put on corrected_latency samples
// that were back-filled for expectedInterval (docs/DESIGN.md §2.3). When the run
// has a corrected_latency{backfilled:true} submetric, the summary says how
// many samples were back-filled rather than measured.
const BackfilledTag = "backfilled"

// Text renders the end-of-test summary in k6's compact layout, or with
// Options.Mode "full" its full layout (the HTTP timing metrics and a
// section per group). The sections are:
//
//	█ THRESHOLDS       per metric, ✓/✗ 'expression' stat=value
//	█ TOTAL RESULTS    checks_total/succeeded/failed and the root checks,
//	                   then the metrics by category: CUSTOM, HTTP,
//	                   CORRECTED LATENCY (metronome's corrected_latency and
//	                   schedule_lag), EXECUTION, NETWORK, ...
//	█ GROUP: name      full mode only: each group's checks
//	█ SCENARIOS        the arrival account of each open-model scenario,
//	                   then the back-fill account of each closed-model
//	                   scenario that back-fills corrected_latency
//	WARN ...           the run's warnings
//
// Compact mode hides the checks Rate, group_duration and the six
// http_req_* timing metrics, matching by name prefix as k6 does (see
// hidden). Trends show Options.TrendStats; counters "count rate/s"; gauges
// "value min=… max=…"; rates "x.xx% N out of M". Time values are humanised
// (or forced to Options.TimeUnit) and data values are shown in bytes.
func Text(in *Input) string {
	if in == nil {
		in = &Input{}
	}
	r := &textRenderer{
		in:    in,
		full:  in.Options.Mode == "full",
		color: !in.Options.NoColor,
		stats: trendStats(in.Options),
	}
	r.b.WriteByte('\n')
	r.thresholds()
	r.totals()
	if r.full && in.RootGroup != nil {
		for _, g := range in.RootGroup.Groups {
			r.group(g)
		}
	}
	r.endpoints()
	r.scenarios()
	r.capacity()
	r.backFills()
	r.health()
	r.warnings()
	return r.b.String()
}

// maxEndpointRows is how many endpoints the text summary lists, the
// slowest by corrected p99 first (handleSummary's data has them all), and
// maxEndpointName how many characters of a name it shows.
const (
	maxEndpointRows = 20
	maxEndpointName = 60
)

// shorten cuts s to n characters, the last one an ellipsis.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// endpoints writes the per-endpoint table of raw against corrected
// latency (docs/DESIGN.md §2.2) when the run's requests have more than one
// name: which endpoint's tail did a stall hit, and how much of it the raw
// figures hid.
func (r *textRenderer) endpoints() {
	eps := slices.Clone(r.in.Endpoints)
	if len(eps) < 2 {
		return
	}
	slices.SortStableFunc(eps, func(a, b EndpointReport) int { return cmp.Compare(b.Corrected.P99, a.Corrected.P99) })
	r.heading("ENDPOINTS (per name: each request's own time, raw, against its corrected_latency)")
	unit := r.in.Options.TimeUnit
	rows := [][]string{{"name", "requests", "raw p50", "p99", "p99.9", "corrected p50", "p99", "p99.9"}}
	for i, e := range eps {
		if i == maxEndpointRows {
			break
		}
		raw := []string{"n/a", "n/a", "n/a"}
		if e.RawMetric != "" {
			raw = []string{formatTime(e.Raw.P50, unit), formatTime(e.Raw.P99, unit), formatTime(e.Raw.P999, unit)}
		}
		rows = append(rows, append(append([]string{shorten(e.Name, maxEndpointName), strconv.FormatInt(e.Requests, 10)}, raw...),
			formatTime(e.Corrected.P50, unit), formatTime(e.Corrected.P99, unit), formatTime(e.Corrected.P999, unit)))
	}
	r.table("    ", rows)
	if n := len(eps) - maxEndpointRows; n > 0 {
		fmt.Fprintf(&r.b, "    … and %d more (all in handleSummary's data)\n", n)
	}
	if r.in.EndpointsFolded > 0 {
		fmt.Fprintf(&r.b, "    %d corrected_latency samples of names beyond the first %d are in the totals only\n",
			r.in.EndpointsFolded, metrics.MaxBreakdownValues)
	}
	r.b.WriteString("\n\n")
}

type textRenderer struct {
	in    *Input
	b     strings.Builder
	full  bool
	color bool
	stats []string
}

func (r *textRenderer) paint(code, s string) string {
	if !r.color {
		return s
	}
	return code + s + ansiReset
}

func (r *textRenderer) mark(ok bool) string {
	if ok {
		return r.paint(ansiGreen, "✓")
	}
	return r.paint(ansiRed, "✗")
}

func (r *textRenderer) heading(title string) {
	r.b.WriteString("  █ ")
	r.b.WriteString(title)
	r.b.WriteString("\n\n")
}

func (r *textRenderer) thresholds() {
	var with []*Metric
	for i := range r.in.Metrics {
		if len(r.in.Metrics[i].Thresholds) > 0 {
			with = append(with, &r.in.Metrics[i])
		}
	}
	if len(with) == 0 {
		return
	}
	sort.SliceStable(with, func(i, j int) bool { return with[i].Name < with[j].Name })
	r.heading("THRESHOLDS")
	for _, m := range with {
		fmt.Fprintf(&r.b, "    %s\n", m.Name)
		for _, t := range m.Thresholds {
			fmt.Fprintf(&r.b, "    %s '%s'", r.mark(t.OK), t.Source)
			if t.Window != 0 {
				r.windowVerdict(m, &t)
			} else if agg, v, ok := thresholdStat(m, t.Source, r.in.State.TestRunDuration); ok {
				fmt.Fprintf(&r.b, " %s=%s", agg, r.thresholdValue(m, agg, v))
			}
			r.b.WriteByte('\n')
		}
		r.b.WriteByte('\n')
	}
	r.b.WriteByte('\n')
}

// windowVerdict writes how a windowed threshold's windows went: the worst
// window's value and where it was, then WindowVerdict.String.
//
//	✗ 'p(99)<500' p(99)=2s in the worst 10s window (51s–1m1s); 11 of 111 10s windows failed: 51s–1m11s
func (r *textRenderer) windowVerdict(m *Metric, t *Threshold) {
	w := &t.Windows
	if agg, ok := thresholdAgg(t.Source); ok && w.Judged > 0 {
		fmt.Fprintf(&r.b, " %s=%s in the worst %s window (%s);", agg, r.thresholdValue(m, agg, w.Value), t.Window, FormatSpan(w.Worst))
	}
	r.b.WriteString(" " + w.String(t.Window))
}

// maxFailingSpans is how many stretches of failing windows are listed; the
// others are counted.
const maxFailingSpans = 5

// spans lists the stretches the failing windows cover: "51s–1m11s,
// 1m40s–1m50s".
func (w *WindowVerdict) spans() string {
	var b strings.Builder
	for i, s := range w.Failing[:min(len(w.Failing), maxFailingSpans)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(FormatSpan(s))
	}
	if more := len(w.Failing) - maxFailingSpans; more > 0 {
		fmt.Fprintf(&b, " and %d more", more)
	}
	return b.String()
}

// String says how the windows of length window went, in the summary's
// threshold lines and the report's table: "12 of 111 10s windows failed:
// 51s–1m11s, 1m40s–1m50s (3 samples came too late for their windows)".
func (w WindowVerdict) String(window time.Duration) string {
	var s string
	switch {
	case w.Judged == 0:
		return fmt.Sprintf("no %s window had samples", window)
	case w.Failed == 0:
		s = fmt.Sprintf("all %d %s windows passed", w.Judged, window)
	default:
		s = fmt.Sprintf("%d of %d %s windows failed: %s", w.Failed, w.Judged, window, w.spans())
	}
	if w.Late > 0 {
		s += fmt.Sprintf(" (%d samples came too late for their windows)", w.Late)
	}
	return s
}

// FormatSpan writes a stretch of the run as offsets from its start,
// "51s–1m1s".
func FormatSpan(s metrics.WindowSpan) string { return s.From.String() + "–" + s.To.String() }

// thresholdValue formats a threshold's aggregated value in the unit it
// has: a Rate's rate as a percentage, a counter's rate per second, a count
// as a plain number, anything else in the metric's unit.
func (r *textRenderer) thresholdValue(m *Metric, agg string, v float64) string {
	contains := metricContains(m)
	switch m.Sink.(type) {
	case *metrics.RateSink:
		return formatPercent(v)
	case *metrics.CounterSink:
		if agg == "rate" {
			return formatPerSecond(v, contains)
		}
	case *metrics.TrendSink:
		if agg == "count" {
			return formatNumber(v)
		}
	}
	return formatValue(v, contains, r.in.Options.TimeUnit)
}

// A line of the TOTAL RESULTS block: a metric row (label and value
// columns, aligned across the block) or verbatim text.
type line struct {
	text   string
	label  string
	parts  []string
	trend  bool
	isText bool
}

func textLine(s string) line { return line{text: s, isText: true} }

func (r *textRenderer) totals() {
	var lines []line
	if total, passes, ok := r.checkTotals(); ok {
		fails := total - passes
		d := r.in.State.TestRunDuration
		rate := 0.0
		if d > 0 {
			rate = float64(total) / d.Seconds()
		}
		lines = append(lines,
			line{label: "checks_total", parts: []string{strconv.FormatInt(total, 10), formatNumber(rate) + "/s"}},
			line{label: "checks_succeeded", parts: []string{formatPercent(fraction(passes, total)), outOf(passes, total)}},
			line{label: "checks_failed", parts: []string{formatPercent(fraction(fails, total)), outOf(fails, total)}},
		)
		if r.in.RootGroup != nil && len(r.in.RootGroup.Checks) > 0 {
			lines = append(lines, textLine(""))
			lines = append(lines, r.checkLines(r.in.RootGroup.Checks, "    ")...)
		}
		lines = append(lines, textLine(""))
	}
	lines = append(lines, r.metricLines()...)
	r.heading("TOTAL RESULTS")
	r.writeLines(lines)
}

// checkTotals counts all checks: from the checks Rate when the run has
// one, else from the group tree.
func (r *textRenderer) checkTotals() (total, passes int64, ok bool) {
	for i := range r.in.Metrics {
		m := &r.in.Metrics[i]
		if m.Name == metrics.ChecksName && m.Parent == "" {
			// The checks metric is in the summary when a check ran or a
			// threshold names it (`checks: []` included): k6 then shows
			// the totals, zeros too.
			if s, isRate := m.Sink.(*metrics.RateSink); isRate {
				return s.Total, s.Trues, true
			}
		}
	}
	var walk func(g *Group)
	walk = func(g *Group) {
		for _, c := range g.Checks {
			passes += c.Passes
			total += c.Passes + c.Fails
		}
		for _, sub := range g.Groups {
			walk(sub)
		}
	}
	if r.in.RootGroup != nil {
		walk(r.in.RootGroup)
	}
	return total, passes, total > 0
}

func fraction(n, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(n) / float64(total)
}

func outOf(n, total int64) string {
	return strconv.FormatInt(n, 10) + " out of " + strconv.FormatInt(total, 10)
}

// checkLines lists checks as "✓ name"; a failing one gets a second line
// with its pass percentage and tallies.
func (r *textRenderer) checkLines(checks []*Check, indent string) []line {
	var out []line
	for _, c := range checks {
		ok := c.Fails == 0
		out = append(out, textLine(indent+r.mark(ok)+" "+c.Name))
		if !ok {
			pct := int64(math.Floor(fraction(c.Passes, c.Passes+c.Fails) * 100))
			out = append(out, textLine(fmt.Sprintf("%s  ↳  %d%% — %s %d / %s %d",
				indent, pct, r.mark(true), c.Passes, r.mark(false), c.Fails)))
		}
	}
	return out
}

// metricLines builds the categorised metric rows: parents sorted by name,
// each followed by its submetrics.
func (r *textRenderer) metricLines() []line {
	byCat := map[string][]*Metric{}
	subs := map[string][]*Metric{}
	present := map[string]bool{}
	for i := range r.in.Metrics {
		m := &r.in.Metrics[i]
		if m.Parent == "" {
			present[m.Name] = true
		}
	}
	for i := range r.in.Metrics {
		m := &r.in.Metrics[i]
		if hidden(m.Name, r.full) {
			continue
		}
		if m.Parent != "" && present[m.Parent] {
			subs[m.Parent] = append(subs[m.Parent], m)
			continue
		}
		byCat[category(baseName(m))] = append(byCat[category(baseName(m))], m)
	}
	var out []line
	for _, cat := range categoryOrder {
		ms := byCat[cat]
		if len(ms) == 0 {
			continue
		}
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
		out = append(out, textLine("    "+cat))
		for _, m := range ms {
			out = append(out, r.metricRow(m, m.Name))
			children := subs[m.Name]
			sort.SliceStable(children, func(i, j int) bool { return children[i].Name < children[j].Name })
			for _, s := range children {
				out = append(out, r.metricRow(s, "  "+selectorLabel(s)))
			}
			if m.Name == metrics.CorrectedLatencyName {
				if n := backfilledCount(children); n > 0 {
					how := "(expectedInterval)"
					if r.estimated() {
						how = "(expectedInterval; 'auto' ones estimated from each VU's cadence)"
					}
					out = append(out, textLine(fmt.Sprintf(
						"      ↳ includes %d back-filled samples %s, not measured", n, how)))
				}
			}
		}
		out = append(out, textLine(""))
	}
	return out
}

// baseName is the metric's name without a submetric selector.
func baseName(m *Metric) string {
	if m.Parent != "" {
		return m.Parent
	}
	if i := strings.IndexByte(m.Name, '{'); i > 0 {
		return m.Name[:i]
	}
	return m.Name
}

// selectorLabel prints a submetric's selector as k6 does: what its name
// holds between the braces, as written, "{ tag:value, tag:value }".
func selectorLabel(m *Metric) string {
	_, inner, _ := strings.Cut(m.Name, "{")
	return "{ " + strings.TrimSuffix(inner, "}") + " }"
}

// backfilledCount is the sample count of a corrected_latency submetric
// selecting backfilled:true, 0 when there is none.
func backfilledCount(subs []*Metric) int64 {
	for _, s := range subs {
		if s.Selector == nil {
			continue
		}
		if v, ok := s.Selector.Get(BackfilledTag); ok && v == "true" && s.Selector.Len() == 1 {
			if t, ok := s.Sink.(*metrics.TrendSink); ok {
				return t.Count()
			}
		}
	}
	return 0
}

func (r *textRenderer) metricRow(m *Metric, label string) line {
	contains := metricContains(m)
	unit := r.in.Options.TimeUnit
	switch s := m.Sink.(type) {
	case *metrics.TrendSink:
		parts := make([]string, 0, len(r.stats))
		for _, name := range r.stats {
			v, ok := trendStat(s, name)
			if !ok {
				continue
			}
			val := formatValue(v, contains, unit)
			if name == "count" {
				val = formatNumber(v)
			}
			parts = append(parts, name+"="+val)
		}
		return line{label: label, parts: parts, trend: true}
	case *metrics.CounterSink:
		return line{label: label, parts: []string{
			formatValue(s.Sum, contains, unit),
			formatPerSecond(s.Rate(r.in.State.TestRunDuration), contains),
		}}
	case *metrics.GaugeSink:
		return line{label: label, parts: []string{
			formatValue(s.Value, contains, unit),
			"min=" + formatValue(s.Min, contains, unit),
			"max=" + formatValue(s.Max, contains, unit),
		}}
	case *metrics.RateSink:
		return line{label: label, parts: []string{
			formatPercent(s.Rate()),
			outOf(s.Trues, s.Total),
		}}
	}
	return line{label: label}
}

// writeLines writes rows with labels padded by dots to one width and each
// value column padded to the widest value in it; trends and other metrics
// align their columns separately.
func (r *textRenderer) writeLines(lines []line) {
	labelW := 0
	var trendW, otherW []int
	for _, l := range lines {
		if l.isText {
			continue
		}
		labelW = max(labelW, utf8.RuneCountInString(l.label))
		w := &otherW
		if l.trend {
			w = &trendW
		}
		for i, p := range l.parts {
			if i >= len(*w) {
				*w = append(*w, 0)
			}
			(*w)[i] = max((*w)[i], utf8.RuneCountInString(p))
		}
	}
	labelW += 3
	for _, l := range lines {
		if l.isText {
			r.b.WriteString(l.text)
			r.b.WriteByte('\n')
			continue
		}
		r.b.WriteString("    ")
		r.b.WriteString(l.label)
		r.b.WriteString(strings.Repeat(".", labelW-utf8.RuneCountInString(l.label)))
		r.b.WriteString(":")
		w := otherW
		if l.trend {
			w = trendW
		}
		for i, p := range l.parts {
			r.b.WriteByte(' ')
			r.b.WriteString(p)
			if i < len(l.parts)-1 {
				r.b.WriteString(strings.Repeat(" ", w[i]-utf8.RuneCountInString(p)))
			}
		}
		r.b.WriteByte('\n')
	}
	r.b.WriteByte('\n')
}

// group writes a full-mode section for g and then for its subgroups.
func (r *textRenderer) group(g *Group) {
	title := strings.TrimPrefix(g.Path, "::")
	if title == "" {
		title = g.Name
	}
	r.heading("GROUP: " + title)
	if len(g.Checks) > 0 {
		for _, l := range r.checkLines(g.Checks, "    ") {
			r.b.WriteString(l.text)
			r.b.WriteByte('\n')
		}
		r.b.WriteString("\n\n")
	}
	for _, sub := range g.Groups {
		r.group(sub)
	}
}

// scenarios writes the arrival account of each open-model scenario
// (docs/DESIGN.md §2.4). A raw p99 of 0 means the scenario made no HTTP request and
// is shown as n/a.
func (r *textRenderer) scenarios() {
	if len(r.in.Scenarios) == 0 {
		return
	}
	r.heading("SCENARIOS (open model: latency from the intended start)")
	unit := r.in.Options.TimeUnit
	for _, s := range r.in.Scenarios {
		fmt.Fprintf(&r.b, "    %s (%s)\n", s.Name, s.Executor)
		raw := "n/a"
		if s.RawP99 != 0 {
			raw = formatTime(s.RawP99, unit)
		}
		rows := [][2]string{
			{"arrivals", fmt.Sprintf("%d intended, %d on time, %d late, %d dropped, %d interrupted",
				s.Intended, s.OnTime, s.Late, s.Dropped, s.Interrupted)},
			{"peak backlog", strconv.FormatInt(s.PeakBacklog, 10)},
			{"p99", fmt.Sprintf("raw %s (%s), corrected %s (corrected_latency)",
				raw, rawMetric(s.RawMetric), formatTime(s.CorrectedP99, unit))},
		}
		if s.Late > 0 {
			// Whose lateness it was: the backlog's (every VU busy) or the
			// generator's own (a VU was free, its goroutine woke late).
			rows = slices.Insert(rows, 1, [2]string{"late", fmt.Sprintf("%d waited for a busy VU, %d started late with a VU free (the generator woke late)",
				s.LateForVU, s.Late-s.LateForVU)})
		}
		for _, row := range rows {
			fmt.Fprintf(&r.b, "      %s%s: %s\n", row[0], strings.Repeat(".", 15-len(row[0])), row[1])
		}
		r.b.WriteByte('\n')
	}
	r.b.WriteByte('\n')
}

// rawMetric names the metric of a scenario's raw p99: http_req_duration
// unless a latency trend stood in for it.
func rawMetric(name string) string {
	if name == "" {
		return metrics.HTTPReqDurationName
	}
	return name
}

// capacity writes the result of each capacity-search scenario and a row
// per step: its rate, corrected and raw p50/p99, error rate, the
// generator's CPU share and scheduling p99, and its verdict.
func (r *textRenderer) capacity() {
	if len(r.in.Capacity) == 0 {
		return
	}
	r.heading("CAPACITY SEARCH (the highest rate whose corrected_latency met the objective)")
	unit := r.in.Options.TimeUnit
	for _, c := range r.in.Capacity {
		fmt.Fprintf(&r.b, "    %s (objective %s): %s\n", c.Name, c.Objective, c.Verdict)
		rows := [][]string{{"rate/s", "corrected p50", "p99", "raw p50", "p99", "errors", "generator cpu", "sched p99", "verdict"}}
		for _, st := range c.Steps {
			cpu := "n/a"
			if !math.IsNaN(st.CPU) {
				cpu = fmt.Sprintf("%.0f%%", 100*st.CPU)
			}
			raw50, raw99 := "n/a", "n/a"
			if st.RawP99 != 0 {
				raw50, raw99 = formatTime(st.RawP50, unit), formatTime(st.RawP99, unit)
			}
			rows = append(rows, []string{fmt.Sprintf("%.2f", st.Rate),
				formatTime(st.CorrectedP50, unit), formatTime(st.CorrectedP99, unit), raw50, raw99,
				fmt.Sprintf("%.2f%%", 100*st.ErrorRate), cpu, formatTime(st.SchedP99, unit), st.Verdict})
		}
		r.table("      ", rows)
		r.b.WriteByte('\n')
	}
	r.b.WriteByte('\n')
}

// table writes rows as columns after indent: the first column aligned
// left, the others right.
func (r *textRenderer) table(indent string, rows [][]string) { columns.Write(&r.b, indent, "lr", rows) }

// estimated reports whether any scenario back-filled from estimated
// intervals.
func (r *textRenderer) estimated() bool {
	for _, b := range r.in.BackFills {
		if b.Estimated {
			return true
		}
	}
	return false
}

// backFills writes the back-fill account of each closed-model scenario
// that back-fills corrected_latency (docs/DESIGN.md §2.4): the interval
// (per-VU estimates: their median and range), the samples added, the
// iterations that ran before their VU had an estimate, and the raw p99s
// beside the back-filled one.
func (r *textRenderer) backFills() {
	if len(r.in.BackFills) == 0 {
		return
	}
	r.heading("SCENARIOS (closed model: corrected_latency back-filled, not measured)")
	unit := r.in.Options.TimeUnit
	for _, s := range r.in.BackFills {
		fmt.Fprintf(&r.b, "    %s (%s, expectedInterval: %s)\n", s.Name, s.Executor, s.ExpectedInterval)
		var interval, filled string
		switch {
		case !s.Estimated:
			interval = formatTime(s.CadenceMedian, unit) + ", hand-set"
			filled = fmt.Sprintf("%d samples", s.Backfilled)
		case s.VUs == 0:
			interval = "no VU ran enough iterations for an estimate"
		default:
			interval = fmt.Sprintf("estimated per VU: median %s of %d VUs (%s – %s)",
				formatTime(s.CadenceMedian, unit), s.VUs, formatTime(s.CadenceMin, unit), formatTime(s.CadenceMax, unit))
		}
		if s.Estimated {
			filled = fmt.Sprintf("%d samples (estimates) for %d requests; %d iterations ran before their VU had an estimate and back-filled nothing",
				s.Backfilled, s.Requests, s.Unestimated)
		}
		raw := "raw "
		if s.RawP99 != 0 {
			raw += formatTime(s.RawP99, unit) + " (" + rawMetric(s.RawMetric) + "), "
		}
		raw += formatTime(s.IterationP99, unit) + " (iteration_duration); back-filled " + formatTime(s.CorrectedP99, unit) + " (corrected_latency)"
		for _, row := range [][2]string{{"interval", interval}, {"back-filled", filled}, {"p99", raw}} {
			fmt.Fprintf(&r.b, "      %s%s: %s\n", row[0], strings.Repeat(".", 15-len(row[0])), row[1])
		}
		r.b.WriteByte('\n')
	}
	r.b.WriteByte('\n')
}

// health writes the account of the generator's own health: how many
// intervals it was measured in and in how many it may have inflated
// latency, its CPU share, scheduling latency, collector pauses and the
// split of late arrivals.
func (r *textRenderer) health() {
	h := r.in.Health
	if h == nil {
		return
	}
	r.heading(fmt.Sprintf("GENERATOR HEALTH (per %s interval)", h.Interval))
	unit := r.in.Options.TimeUnit
	limited := "none in which the generator may have inflated latency"
	if h.Limited > 0 {
		var why []string
		for _, rs := range h.Reasons {
			why = append(why, fmt.Sprintf("%s %d", rs.Reason, rs.Intervals))
		}
		limited = fmt.Sprintf("%d in which the generator may have inflated latency (%s)", h.Limited, strings.Join(why, ", "))
	}
	cpu := "n/a on this platform"
	if !math.IsNaN(h.CPUMax) {
		cores := "cores"
		if h.Procs == 1 {
			cores = "core"
		}
		cpu = fmt.Sprintf("median %.0f%%, max %.0f%% of %d %s", 100*h.CPUMedian, 100*h.CPUMax, h.Procs, cores)
	}
	rows := [][2]string{
		{"intervals", fmt.Sprintf("%d, %s", h.Intervals, limited)},
		{"cpu", cpu},
		{"sched p99", fmt.Sprintf("median %s, max %s (goroutines runnable, waiting to run)",
			formatTime(h.SchedP99Median, unit), formatTime(h.SchedP99Max, unit))},
		{"gc pauses", fmt.Sprintf("at most %s in one interval", formatTime(h.GCPauseMax, unit))},
	}
	if h.Arrivals > 0 {
		rows = append(rows, [2]string{"late starts", fmt.Sprintf("%.2f%% the generator woke late, %.2f%% waited for a VU (of %d arrivals)",
			100*fraction(h.LateWakeup, h.Arrivals), 100*fraction(h.LateForVU, h.Arrivals), h.Arrivals)})
	}
	for _, row := range rows {
		fmt.Fprintf(&r.b, "    %s%s: %s\n", row[0], strings.Repeat(".", 15-len(row[0])), row[1])
	}
	r.b.WriteString("\n\n")
}

func (r *textRenderer) warnings() {
	for _, w := range r.in.Warnings {
		fmt.Fprintf(&r.b, "  %s %s\n", r.paint(ansiYellow, "WARN"), w)
	}
	if len(r.in.Warnings) > 0 {
		r.b.WriteByte('\n')
	}
}
