// Package percentiles is the presentation of latency percentiles shared by
// the after-test tools (merge, audit, compare): which percentiles they
// report and how they name them, the rows of a distribution and of a
// request name, and those rows as aligned text tables and as JSON, values
// in milliseconds. The numbers come from the readers of each format
// (output/hdrlog's Distribution.Summarize, internal/audit,
// internal/compare); this package only shapes them.
package percentiles

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/internal/columns"
)

// Table are the percentiles of merge's and audit's tables.
var Table = []float64{50, 90, 95, 99, 99.9}

// Summary is a latency distribution's numbers in milliseconds: a row of
// merge's, audit's and compare's tables.
type Summary struct {
	Metric    string  `json:"metric"`
	Labels    string  `json:"labels,omitempty"`
	Count     int64   `json:"count"`
	Min       float64 `json:"min"`
	Mean      float64 `json:"mean"`
	Max       float64 `json:"max"`
	Intervals int     `json:"intervals"`
	// Percentiles maps "p50", "p99.9", ... to values.
	Percentiles map[string]float64 `json:"percentiles"`
	Start       time.Time          `json:"start"`
	End         time.Time          `json:"end"`
}

// ByName are the percentiles of the per-name view, as in the end-of-test
// summary's endpoint table.
var ByName = []float64{50, 99, 99.9}

// EndpointSummary is one request name's numbers in milliseconds, in the
// shape of handleSummary's metronome.endpoints.
type EndpointSummary struct {
	Name   string `json:"name"`
	Folded bool   `json:"folded,omitempty"`
	// Requests counts the raw samples, CorrectedSamples the corrected ones
	// (back-filled samples included).
	Requests         int64  `json:"requests"`
	CorrectedSamples int64  `json:"correctedSamples"`
	RawMetric        string `json:"rawMetric,omitempty"`
	// Raw and Corrected map "p(50)", "p(99)", "p(99.9)" to values; nil when
	// the name has no such samples.
	Raw       map[string]float64 `json:"raw,omitempty"`
	Corrected map[string]float64 `json:"corrected,omitempty"`
}

// SortEndpoints orders endpoints as the summary does, the slowest by
// corrected p99 first; those without corrected samples, then the folded
// names, last.
func SortEndpoints(eps []EndpointSummary) {
	p99 := func(e EndpointSummary) float64 {
		if e.Corrected == nil {
			return -1
		}
		return e.Corrected["p(99)"]
	}
	sort.SliceStable(eps, func(i, j int) bool {
		if eps[i].Folded != eps[j].Folded {
			return eps[j].Folded
		}
		if a, b := p99(eps[i]), p99(eps[j]); a != b {
			return a > b
		}
		return eps[i].Name < eps[j].Name
	})
}

// FoldedName is how tables show the folded names.
const FoldedName = "(names past the cap, folded)"

// WriteEndpointTable prints endpoints as an aligned table: name, requests,
// then raw and corrected p50, p99, p99.9.
func WriteEndpointTable(w io.Writer, eps []EndpointSummary, pcts []float64) error {
	head := []string{"name", "requests"}
	for _, kind := range []string{"raw", "corrected"} {
		for _, p := range pcts {
			head = append(head, kind+" "+Name(p))
		}
	}
	rows := [][]string{head}
	for _, e := range eps {
		name := e.Name
		if e.Folded {
			name = FoldedName
		}
		row := []string{name, fmt.Sprint(e.Requests)}
		for _, vals := range []map[string]float64{e.Raw, e.Corrected} {
			for _, p := range pcts {
				v, ok := vals[StatName(p)]
				if !ok {
					row = append(row, "n/a")
					continue
				}
				row = append(row, FormatMs(v))
			}
		}
		rows = append(rows, row)
	}
	return writeColumns(w, "lr", rows)
}

// StatName writes p as k6 names a trend stat: 99.9 → p(99.9).
func StatName(p float64) string { return "p(" + strings.TrimPrefix(Name(p), "p") + ")" }

// Name writes p as k6 names a stat column: 99.9 → p99.9.
func Name(p float64) string {
	return "p" + strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.4f", p), "0"), ".")
}

// WriteTable prints summaries as an aligned table: names left-aligned,
// numbers right-aligned, durations in readable units.
func WriteTable(w io.Writer, sums []Summary, pcts []float64) error {
	head := []string{"metric", "labels", "count", "min", "mean"}
	for _, p := range pcts {
		head = append(head, Name(p))
	}
	head = append(head, "max")
	rows := [][]string{head}
	for _, s := range sums {
		labels := s.Labels
		if labels == "" {
			labels = "-"
		}
		row := []string{s.Metric, labels, fmt.Sprint(s.Count), FormatMs(s.Min), FormatMs(s.Mean)}
		for _, p := range pcts {
			row = append(row, FormatMs(s.Percentiles[Name(p)]))
		}
		rows = append(rows, append(row, FormatMs(s.Max)))
	}
	return writeColumns(w, "llr", rows)
}

// writeColumns prints rows as columns aligned as align says (see
// columns.Write).
func writeColumns(w io.Writer, align string, rows [][]string) error {
	var b strings.Builder
	columns.Write(&b, "", align, rows)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints summaries as an indented JSON array, values in
// milliseconds rounded to 0.1 µs.
func WriteJSON(w io.Writer, sums []Summary) error {
	out := make([]Summary, len(sums))
	for i, s := range sums {
		s.Min, s.Mean, s.Max = round4(s.Min), round4(s.Mean), round4(s.Max)
		s.Percentiles = round4Map(s.Percentiles)
		out[i] = s
	}
	return writeIndented(w, out)
}

// WriteEndpointJSON prints endpoints as WriteJSON prints summaries.
func WriteEndpointJSON(w io.Writer, eps []EndpointSummary) error {
	out := make([]EndpointSummary, len(eps))
	for i, e := range eps {
		e.Raw, e.Corrected = round4Map(e.Raw), round4Map(e.Corrected)
		out[i] = e
	}
	return writeIndented(w, out)
}

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func round4Map(m map[string]float64) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = round4(v)
	}
	return out
}

// round4 rounds milliseconds to 0.1 µs, below the histograms' resolution,
// so JSON shows no floating-point noise.
func round4(ms float64) float64 { return math.Round(ms*1e4) / 1e4 }

// FormatMs writes milliseconds with a unit that keeps 3–4 significant
// digits: 850µs, 12.35ms, 1.92s, 2m5.1s.
func FormatMs(ms float64) string {
	switch {
	case math.IsNaN(ms) || math.IsInf(ms, 0):
		return fmt.Sprint(ms)
	case ms == 0:
		return "0s"
	case math.Abs(ms) < 1:
		return trimZeros(fmt.Sprintf("%.1f", ms*1000)) + "µs"
	case math.Abs(ms) < 1000:
		return trimZeros(fmt.Sprintf("%.2f", ms)) + "ms"
	case math.Abs(ms) < 60_000:
		return trimZeros(fmt.Sprintf("%.2f", ms/1000)) + "s"
	case math.Abs(ms) >= math.MaxInt64/float64(time.Millisecond):
		// Past what a time.Duration holds (292 years), which only a
		// damaged or forged value reaches: hours, not a wrapped negative.
		return strconv.FormatFloat(ms/3.6e6, 'g', 4, 64) + "h"
	}
	d := time.Duration(math.Round(ms/100) * 100 * float64(time.Millisecond))
	return d.String()
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
