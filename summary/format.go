package summary

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/metronome-load/metronome/metrics"
)

// DefaultTrendStats are k6's default summaryTrendStats, used when
// Options.TrendStats is empty.
var DefaultTrendStats = []string{"avg", "min", "med", "max", "p(90)", "p(95)"}

func trendStats(o Options) []string {
	if len(o.TrendStats) == 0 {
		return DefaultTrendStats
	}
	return o.TrendStats
}

// trendStat computes one summaryTrendStats entry (avg, min, med, max, count
// or p(N)) from a trend sink.
func trendStat(t *metrics.TrendSink, stat string) (float64, bool) {
	switch stat {
	case "avg":
		return t.Avg(), true
	case "min":
		return t.Min(), true
	case "med":
		return t.Med(), true
	case "max":
		return t.Max(), true
	case "count":
		return float64(t.Count()), true
	}
	if p, ok := parsePercentile(stat); ok {
		return t.Percentile(p), true
	}
	return 0, false
}

// parsePercentile reads "p(N)" with 0 ≤ N ≤ 100.
func parsePercentile(stat string) (float64, bool) {
	if !strings.HasPrefix(stat, "p(") || !strings.HasSuffix(stat, ")") {
		return 0, false
	}
	p, err := strconv.ParseFloat(strings.TrimSpace(stat[2:len(stat)-1]), 64)
	if err != nil || p < 0 || p > 100 || math.IsNaN(p) {
		return 0, false
	}
	return p, true
}

// toFixed formats v with exactly prec decimals, rounding as JavaScript's
// Number.prototype.toFixed does (k6 formats its summary in JavaScript):
// to the nearest, and an exact tie away from zero. strconv rounds exact
// ties to even instead (1.125 → "1.12" where k6 prints "1.13"), so ties
// are detected and corrected. A tie needs v to be exactly a decimal with
// prec+1 digits ending in 5, which its shortest form reveals.
func toFixed(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return s
	}
	short := strconv.FormatFloat(v, 'f', -1, 64)
	dot := strings.IndexByte(short, '.')
	if dot < 0 || len(short)-dot-1 != prec+1 || short[len(short)-1] != '5' {
		return s
	}
	exact, ok := new(big.Rat).SetString(short)
	if !ok || exact.Cmp(new(big.Rat).SetFloat64(v)) != 0 {
		return s
	}
	r, _ := new(big.Rat).SetString(short[:len(short)-1])
	step := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(prec)), nil))
	if v < 0 {
		step.Neg(step)
	}
	return r.Add(r, step).FloatString(prec)
}

// fixed formats v with at most prec decimals, dropping trailing zeros (the
// way k6 prints most numbers: 148.2, not 148.20).
func fixed(v float64, prec int) string {
	s := toFixed(v, prec)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// formatNumber prints a plain value: up to six decimals, trailing zeros
// dropped.
func formatNumber(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fixed(v, 6)
}

// formatTime prints a time value given in milliseconds. With unit "s", "ms"
// or "us" the value is converted to that unit and printed with exactly two
// decimals; otherwise the unit is picked by magnitude: ns below 1 µs, then
// µs, ms and s with up to two decimals, from one minute on "1m30s" or
// "2h5m0s" with whole seconds, and past 2^63 seconds "2.778e+296h".
func formatTime(ms float64, unit string) string {
	switch unit {
	case "s":
		return toFixed(ms/1000, 2) + "s"
	case "ms":
		return toFixed(ms, 2) + "ms"
	case "us":
		return toFixed(ms*1000, 2) + "µs"
	}
	switch {
	case math.IsNaN(ms) || math.IsInf(ms, 0):
		return formatNumber(ms)
	case ms == 0:
		return "0s"
	case ms < 0:
		return "-" + formatTime(-ms, unit)
	case ms < 0.001:
		return strconv.FormatInt(int64(ms*1e6), 10) + "ns"
	case ms < 1:
		return fixed(ms*1000, 2) + "µs"
	case ms < 1000:
		return fixed(ms, 2) + "ms"
	case ms < 60000:
		return fixed(ms/1000, 2) + "s"
	}
	if ms/1000 >= math.MaxInt64 {
		// Past what whole seconds can count (about 292 billion years),
		// which only a damaged or forged value reaches: hours, in four
		// significant digits, rather than a wrapped negative.
		return strconv.FormatFloat(ms/3.6e6, 'g', 4, 64) + "h"
	}
	total := int64(math.Round(ms / 1000))
	h, m, s := total/3600, total/60%60, total%60
	if h > 0 {
		return fmt.Sprintf("%dh%dm%ds", h, m, s)
	}
	return fmt.Sprintf("%dm%ds", m, s)
}

var byteUnits = []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}

// formatBytes prints a byte amount with decimal (SI) units: below 10 bytes
// the number itself, otherwise scaled to kB, MB, … with one decimal below
// 10 and none above ("5.8 kB", "31 kB", "963 B").
func formatBytes(b float64) string {
	if math.IsNaN(b) || math.IsInf(b, 0) {
		return formatNumber(b) + " B"
	}
	if b < 0 {
		return "-" + formatBytes(-b)
	}
	if b < 10 {
		return fixed(b, 2) + " B"
	}
	e := 0
	for e < len(byteUnits)-1 && b >= math.Pow(1000, float64(e+1)) {
		e++
	}
	v := math.Floor(b/math.Pow(1000, float64(e))*10+0.5) / 10
	if v >= 1000 && e < len(byteUnits)-1 {
		e++
		v = math.Floor(v/1000*10+0.5) / 10
	}
	if v < 10 {
		return toFixed(v, 1) + " " + byteUnits[e]
	}
	return toFixed(v, 0) + " " + byteUnits[e]
}

// formatValue prints v in the unit its metric contains.
func formatValue(v float64, contains metrics.ValueType, timeUnit string) string {
	switch contains {
	case metrics.Time:
		return formatTime(v, timeUnit)
	case metrics.Data:
		return formatBytes(v)
	}
	return formatNumber(v)
}

// formatPerSecond prints a rate per second in the metric's unit.
func formatPerSecond(v float64, contains metrics.ValueType) string {
	if contains == metrics.Data {
		return formatBytes(v) + "/s"
	}
	return formatNumber(v) + "/s"
}

// formatPercent prints a fraction as a percentage with two decimals.
func formatPercent(f float64) string {
	return toFixed(f*100, 2) + "%"
}
