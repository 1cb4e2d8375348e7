//go:build unix

package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// A row is one line of the results table: metronome's figure (the median
// of its runs) and, for a comparison, the same measure of one peer and the
// ratio metronome / peer. Pass is nil for a figure without a target.
type row struct {
	Measure   string    `json:"measure"`
	Unit      string    `json:"unit,omitempty"`
	Value     float64   `json:"value"`
	Runs      []float64 `json:"runs,omitempty"`
	Peer      string    `json:"peer,omitempty"`
	PeerValue *float64  `json:"peer_value,omitempty"`
	PeerRuns  []float64 `json:"peer_runs,omitempty"`
	Ratio     *float64  `json:"ratio,omitempty"`
	Target    string    `json:"target,omitempty"`
	Pass      *bool     `json:"pass,omitempty"`
	Note      string    `json:"note,omitempty"`
}

// A goal is a target on a comparison: its text for the table and the test
// of metronome's median, the peer's median and their ratio.
type goal struct {
	text string
	met  func(m, p, ratio float64) bool
}

// ratioAtMost is met when metronome / peer ≤ limit (less is better: CPU,
// memory, latency).
func ratioAtMost(limit float64, text string) *goal {
	return &goal{text: text, met: func(_, _, r float64) bool { return r <= limit }}
}

// ratioAtLeast is met when metronome / peer ≥ limit (more is better).
func ratioAtLeast(limit float64, text string) *goal {
	return &goal{text: text, met: func(_, _, r float64) bool { return r >= limit }}
}

// valueAtLeast is met when metronome's own median is at least limit,
// whatever the peer did.
func valueAtLeast(limit float64, text string) *goal {
	return &goal{text: text, met: func(m, _, _ float64) bool { return m >= limit }}
}

// compare builds the row of one measure taken alternately from metronome
// (ms) and a peer (ps): the medians, their ratio and, with a goal, whether
// it was met.
func compare(measure, unit string, ms []float64, peer string, ps []float64, g *goal) row {
	m, p := median(ms), median(ps)
	r := row{Measure: measure, Unit: unit, Value: m, Runs: ms, Peer: peer, PeerValue: &p, PeerRuns: ps}
	ratio := ratioOf(m, p)
	if !math.IsNaN(ratio) {
		r.Ratio = &ratio
	}
	if g != nil {
		r.Target = g.text
		r.Pass = boolp(!math.IsNaN(m) && !math.IsNaN(p) && g.met(m, p, ratio))
	}
	return r
}

// ratioOf is m / p, NaN when either is missing or p is 0.
func ratioOf(m, p float64) float64 {
	if math.IsNaN(m) || math.IsNaN(p) || p == 0 {
		return math.NaN()
	}
	return m / p
}

// median of the values; NaN when there are none. Even counts average the
// two middle values.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// printTable renders the report as the side-by-side table: measure,
// metronome, peer, ratio, target, met?, note.
func printTable(w io.Writer, rep report) {
	fmt.Fprintf(w, "\nmetronome bench — %s, %d CPUs, load average %s → %s, duration scale %g, runs per generator %d\n",
		rep.GoVersion, rep.CPUs, rep.LoadStart, rep.LoadEnd, rep.Scale, rep.Reps)
	for _, p := range rep.Peers {
		fmt.Fprintf(w, "  %s\n", p)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measure\tmetronome\tpeer\tratio\ttarget\tmet?\tnote")
	for _, r := range rep.Rows {
		res := "-"
		if r.Pass != nil {
			res = "FAIL"
			if *r.Pass {
				res = "pass"
			}
		}
		val := "-"
		if r.Unit != "" {
			val = withUnit(r.Value, r.Unit)
		}
		peer := "-"
		if r.Peer != "" && r.PeerValue != nil {
			peer = r.Peer + " " + withUnit(*r.PeerValue, r.Unit)
		}
		ratio := "-"
		if r.Ratio != nil {
			ratio = formatRatio(*r.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Measure, val, peer, ratio, r.Target, res, r.Note)
	}
	tw.Flush()
}

func withUnit(v float64, unit string) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return formatValue(v) + " " + unit
}

// formatRatio shows a ratio with three significant figures.
func formatRatio(r float64) string {
	if r >= 100 {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'g', 3, 64)
}

func formatValue(v float64) string {
	switch av := max(v, -v); {
	case av >= 1000:
		return fmt.Sprintf("%.0f", v)
	case av >= 10:
		return fmt.Sprintf("%.1f", v)
	case av >= 0.1:
		return fmt.Sprintf("%.3f", v)
	default:
		return fmt.Sprintf("%.4g", v)
	}
}

// joinRuns lists run figures for a note: "17.2/18.0/16.9".
func joinRuns(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = formatValue(v)
	}
	return strings.Join(parts, "/")
}
