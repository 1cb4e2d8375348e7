package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/internal/columns"
	"github.com/metronome-load/metronome/internal/percentiles"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/summary"
)

// Reconstructed is the label the audit puts on everything it rebuilt.
const Reconstructed = "RECONSTRUCTED by metronome audit from k6's samples and the script's schedule: arithmetic on what k6 recorded, not a measurement"

// WriteText writes the audit for a reader: what was read and skipped, the
// summary metronome would have printed for the run, how each scenario was
// rebuilt, and k6's figures beside the audited ones.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	rd := r.Reading
	kind := "k6 JSON output"
	if rd.Gzip {
		kind += ", gzip"
	}
	fmt.Fprintf(&b, "metronome audit of %s (%s): %d lines, %d samples from %s to %s\n",
		r.Source, kind, rd.Lines, rd.Points, r.Start.UTC().Format("2006-01-02 15:04:05.000"), r.End.UTC().Format("15:04:05.000 MST"))
	for _, s := range r.Skipped() {
		fmt.Fprintf(&b, "  skipped: %s\n", s)
	}
	if r.Outside > 0 {
		fmt.Fprintf(&b, "  note: %d requests were made outside the scenarios (setup, teardown): they are in k6's figures but record no corrected_latency, as in metronome\n", r.Outside)
	}
	fmt.Fprintf(&b, "\ncorrected_latency, schedule_lag and every \"audit\" row below are %s.\n", Reconstructed)
	b.WriteString(summary.Text(r.Summary))
	b.WriteString(r.accounts())
	b.WriteString(r.table())
	_, err := io.WriteString(w, b.String())
	return err
}

// Skipped says in words what of the output the audit skipped.
func (r *Result) Skipped() []string {
	rd := r.Reading
	var out []string
	if rd.Cut != "" {
		out = append(out, rd.Cut+"; the audit covers what came before")
	}
	if n := rd.Malformed + rd.Unknown; n > 0 {
		out = append(out, fmt.Sprintf("%d lines that are not k6 samples (%s)", n, strings.Join(rd.Examples, "; ")))
	}
	for _, name := range slices.Sorted(maps.Keys(rd.Undeclared)) {
		out = append(out, fmt.Sprintf("%d samples of %s, a metric the output never declared (no Metric line), so of unknown type", rd.Undeclared[name], name))
	}
	for _, name := range slices.Sorted(maps.Keys(rd.Conflicting)) {
		out = append(out, fmt.Sprintf("the samples of %s: the output %s", name, rd.Conflicting[name]))
	}
	return out
}

// accounts describes how each scenario was rebuilt.
func (r *Result) accounts() string {
	var b strings.Builder
	b.WriteString("  █ AUDIT (how each scenario was rebuilt)\n\n")
	row := func(k, v string) { fmt.Fprintf(&b, "      %s%s: %s\n", k, strings.Repeat(".", 15-len(k)), v) }
	for _, sc := range r.Scenarios {
		fmt.Fprintf(&b, "    %s (%s: %s)\n", sc.Name, sc.Executor, sc.Description)
		switch {
		case sc.Open && sc.Iterations+sc.K6Dropped == 0:
			row("schedule", "the output holds no iteration of this scenario")
		case sc.Open:
			row("schedule", fmt.Sprintf("%d arrivals, placed at %s so that the earliest-settled arrival was on time (k6's output does not say when the scenario began); largest lag %s",
				sc.Intended, sc.Anchor.UTC().Format("15:04:05.000000 MST"), percentiles.FormatMs(metrics.Milliseconds(sc.MaxLag))))
			row("arrivals", fmt.Sprintf("%d started (%d on time, %d late), %d dropped (k6 counted %d), %d with no trace in the output",
				sc.OnTime+sc.Late, sc.OnTime, sc.Late, sc.Dropped, sc.K6Dropped, sc.Missing))
			row("charged", "each request its own time plus its iteration's lag; each drop the wait until a VU was free (a lower bound)")
		case !sc.BackFill.Interval.Enabled():
			row("back-fill", "none: expectedInterval is off (the default of the iterations executors; --expected-interval auto back-fills), so nothing is rebuilt, as in metronome")
		default:
			from := "reconstructed from the iterations' starts and ends (an estimate: k6's vu metadata was not in the output)"
			if sc.VUsFromMetadata {
				from = "from k6's vu metadata"
			}
			row("VUs", fmt.Sprintf("%d, %s", sc.VUs, from))
			how := "the hand-set expectedInterval " + sc.BackFill.Interval.String()
			if sc.BackFill.Interval.Mode == executor.IntervalAuto {
				how = "each VU's cadence, estimated before each iteration from its earlier ones (auto)"
			}
			row("back-filled", fmt.Sprintf("%d samples added to %d requests at %s; %d iterations ran before their VU had an estimate", sc.BackFill.Backfilled, sc.BackFill.Requests, how, sc.BackFill.Unestimated))
		}
		if sc.Requests > 0 && (sc.Open || sc.BackFill.Interval.Enabled()) {
			row("requests", sc.linkText())
		}
		for _, n := range sc.Notes {
			row("note", n)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// linkText says how a scenario's requests were linked to iterations.
func (sc *ScenarioAudit) linkText() string {
	var parts []string
	for _, p := range []struct {
		n    int64
		text string
	}{
		{sc.LinkedExact, "by k6's vu and iter metadata (exact)"},
		{sc.LinkedByVU, "by vu metadata and time"},
		{sc.LinkedByTime, "by time alone (estimated: the iteration that started last before the request)"},
		{sc.Unlinked, "not linked (charged their own time only)"},
	} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.text))
		}
	}
	return fmt.Sprintf("%d, linked to their iterations: %s", sc.Requests, strings.Join(parts, ", "))
}

// tablePercentiles are the columns of the text table.
var tablePercentiles = []float64{50, 90, 99, 99.9}

// table prints k6's raw figures beside the rebuilt ones, per scenario and
// per request name.
func (r *Result) table() string {
	var b strings.Builder
	b.WriteString("  █ K6 vs AUDIT (k6: its own samples; audit: corrected_latency reconstructed)\n\n")
	head := []string{"", "", "count"}
	for _, p := range tablePercentiles {
		head = append(head, percentiles.Name(p))
	}
	head = append(head, "max", "> "+percentiles.FormatMs(metrics.Milliseconds(r.Bound)))
	rows := [][]string{head}
	group := ""
	for _, row := range r.Rows {
		if row.Labels != group {
			group = row.Labels
			k, v, _ := strings.Cut(group, "=")
			head := k + " " + v
			if group == foldedLabels {
				head = percentiles.FoldedName
			}
			rows = append(rows, []string{head})
		}
		cells := []string{"  " + row.Source, row.Metric, fmt.Sprint(row.Count)}
		for _, p := range tablePercentiles {
			cells = append(cells, percentiles.FormatMs(row.Percentiles[percentiles.Name(p)]))
		}
		cells = append(cells, percentiles.FormatMs(row.Max), fmt.Sprint(row.OverBound))
		rows = append(rows, cells)
	}
	// A row of one cell heads a group: the names left, the numbers right.
	columns.Write(&b, "    ", "llr", rows)
	if r.Folded != "" {
		fmt.Fprintf(&b, "\n    %s have no rows of their own: their samples are in the rows %s (and in their scenario's)\n", r.Folded, percentiles.FoldedName)
	}
	for _, sc := range r.Scenarios {
		if sc.Dropped > 0 {
			b.WriteString("\n    A dropped arrival sent no request: its corrected_latency is its scenario's, in no name's row.\n")
			break
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// WriteJSON writes the rows as an indented JSON array in the shape of
// metronome merge --json's rows (values in milliseconds), each with its
// source, whether it was reconstructed, and its count over the bound.
func (r *Result) WriteJSON(w io.Writer) error {
	out := make([]Row, len(r.Rows))
	for i, row := range r.Rows {
		row.Min, row.Mean, row.Max = round4(row.Min), round4(row.Mean), round4(row.Max)
		ps := make(map[string]float64, len(row.Percentiles))
		for k, v := range row.Percentiles {
			ps[k] = round4(v)
		}
		row.Percentiles = ps
		out[i] = row
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// round4 rounds milliseconds to 0.1 µs, below the histograms' resolution.
func round4(ms float64) float64 { return math.Round(ms*1e4) / 1e4 }
