package compare

import (
	"encoding/json"
	"fmt"
	"github.com/metronome-load/metronome/internal/percentiles"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/internal/columns"
)

// WriteText prints the comparison: the runs, the rule, one block per row
// (percentile, base, new, difference and interval), and the verdict.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, ri := range []struct {
		role string
		info RunInfo
	}{{"base", r.Base}, {"new ", r.New}} {
		fmt.Fprintf(&b, "%s  %s (%s): %d intervals, %s to %s\n", ri.role, ri.info.File, ri.info.Kind, ri.info.Intervals,
			utc(ri.info.Start), utc(ri.info.End))
	}
	o := r.Options
	fmt.Fprintf(&b, "rule  %s: a regression when worse by more than %s%% and its %s%% interval lies above zero\n",
		r.judgedName(), trimFloat(o.Tolerance), trimFloat(o.Confidence))
	fmt.Fprintf(&b, "      (intervals: a bootstrap over both runs' intervals pooled, in blocks, %d resamples, seed %d)\n", o.Resamples, o.Seed)
	for _, row := range r.Rows {
		labels := row.Labels
		if labels == "" {
			labels = "all samples"
		}
		fmt.Fprintf(&b, "\n%s, %s: %s → %s samples, %d → %d intervals with samples\n", row.Metric, labels,
			count(row.Count[0]), count(row.Count[1]), row.Intervals[0], row.Intervals[1])
		table := [][]string{{"  percentile", "base", "new", "difference", "", trimFloat(o.Confidence) + "% interval"}}
		for _, d := range row.Diffs {
			name := "  " + percentiles.Name(d.Percentile)
			if row.Judged && d.Percentile == o.Percentile {
				name += " (judged)"
			}
			table = append(table, []string{name, value(d.Base, row.Time), value(d.New, row.Time),
				signed(d.Diff, row.Time), "(" + percent(d.Relative) + ")", interval(d.Low, d.High, row.Time)})
		}
		// The percentile left, the numbers right, the interval left.
		columns.Write(&b, "", "lrrrrl", table)
	}
	word := "no regression"
	if r.Verdict.Regression {
		word = "REGRESSION"
	}
	fmt.Fprintf(&b, "\nverdict: %s: %s\n", word, r.Verdict.Reason)
	_, err := io.WriteString(w, b.String())
	return err
}

// judgedName names the judged row: "corrected_latency p99 of all samples".
func (r *Report) judgedName() string {
	of := "all samples"
	if r.Verdict.Labels != "" {
		of = r.Verdict.Labels
	}
	return fmt.Sprintf("%s p%s of %s", r.Verdict.Metric, trimFloat(r.Options.Percentile), of)
}

// WriteJSON prints the comparison as JSON: values in milliseconds for time
// metrics, null where a run has no sample.
func (r *Report) WriteJSON(w io.Writer) error {
	type diffJSON struct {
		Percentile float64  `json:"percentile"`
		Base       *float64 `json:"base"`
		New        *float64 `json:"new"`
		Diff       *float64 `json:"diff"`
		Relative   *float64 `json:"relative"`
		Low        *float64 `json:"low"`
		High       *float64 `json:"high"`
	}
	diff := func(d Diff) diffJSON {
		return diffJSON{d.Percentile, num(d.Base), num(d.New), num(d.Diff), num(d.Relative), num(d.Low), num(d.High)}
	}
	type rowJSON struct {
		Metric    string     `json:"metric"`
		Labels    string     `json:"labels"`
		Time      bool       `json:"time"`
		Count     [2]int64   `json:"count"`
		Intervals [2]int64   `json:"intervals"`
		Block     int64      `json:"block"`
		Judged    bool       `json:"judged,omitempty"`
		Diffs     []diffJSON `json:"diffs"`
	}
	type runJSON struct {
		File      string `json:"file"`
		Kind      string `json:"kind"`
		Intervals int    `json:"intervals"`
		Start     string `json:"start"`
		End       string `json:"end"`
	}
	run := func(i RunInfo) runJSON { return runJSON{i.File, i.Kind, i.Intervals, utc(i.Start), utc(i.End)} }
	o := r.Options
	out := struct {
		Base       runJSON   `json:"base"`
		New        runJSON   `json:"new"`
		Rule       any       `json:"rule"`
		Rows       []rowJSON `json:"rows"`
		Verdict    any       `json:"verdict"`
		Regression bool      `json:"regression"`
	}{
		Base: run(r.Base), New: run(r.New),
		Rule: map[string]any{"metric": r.Verdict.Metric, "labels": r.Verdict.Labels, "percentile": o.Percentile,
			"tolerancePercent": o.Tolerance, "confidencePercent": o.Confidence, "resamples": o.Resamples, "seed": o.Seed},
		Verdict:    map[string]any{"regression": r.Verdict.Regression, "reason": r.Verdict.Reason, "diff": diff(r.Verdict.Diff)},
		Regression: r.Verdict.Regression,
	}
	for _, row := range r.Rows {
		rj := rowJSON{Metric: row.Metric, Labels: row.Labels, Time: row.Time, Count: row.Count,
			Intervals: row.Intervals, Block: row.Block, Judged: row.Judged}
		for _, d := range row.Diffs {
			rj.Diffs = append(rj.Diffs, diff(d))
		}
		out.Rows = append(out.Rows, rj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// num is v for JSON, rounded to 0.1 µs, or nil (null) when not finite.
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	v = math.Round(v*1e4) / 1e4
	return &v
}

func utc(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func count(n int64) string { return strconv.FormatInt(n, 10) }

// value formats a value: a time with a unit, anything else as a number.
func value(v float64, isTime bool) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case isTime:
		return percentiles.FormatMs(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// signed formats a difference with its sign.
func signed(v float64, isTime bool) string {
	if v > 0 {
		return "+" + value(v, isTime)
	}
	return value(v, isTime)
}

// percent formats a relative difference, "+20.0%".
func percent(rel float64) string {
	if math.IsNaN(rel) || math.IsInf(rel, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", 100*rel)
}

func interval(lo, hi float64, isTime bool) string {
	if math.IsNaN(lo) {
		return "—"
	}
	return "[" + signed(lo, isTime) + ", " + signed(hi, isTime) + "]"
}
