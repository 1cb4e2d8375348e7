// Package metrics holds samples, interned tag sets, the registry of metric
// definitions and the sinks that aggregate samples into the numbers that the
// summary, thresholds and outputs read. It knows nothing of JavaScript.
package metrics

import (
	"fmt"
	"strings"
)

// Type is the kind of a metric, with k6's four kinds.
type Type uint8

// The metric types.
const (
	Counter Type = iota
	Gauge
	Rate
	Trend
)

func (t Type) String() string {
	switch t {
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	case Rate:
		return "rate"
	case Trend:
		return "trend"
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// ParseType reads a type name as String writes it.
func ParseType(s string) (Type, error) {
	switch strings.ToLower(s) {
	case "counter":
		return Counter, nil
	case "gauge":
		return Gauge, nil
	case "rate":
		return Rate, nil
	case "trend":
		return Trend, nil
	}
	return 0, fmt.Errorf("unknown metric type %q", s)
}

// ValueType says what a metric's values measure.
type ValueType uint8

// The value types. Time values are float milliseconds; data values are bytes.
const (
	Default ValueType = iota
	Time
	Data
)

func (v ValueType) String() string {
	switch v {
	case Time:
		return "time"
	case Data:
		return "data"
	}
	return "default"
}

// ParseValueType reads a value type as String writes it; any other text
// is Default, the type of plain numbers.
func ParseValueType(s string) ValueType {
	switch s {
	case "time":
		return Time
	case "data":
		return Data
	}
	return Default
}

// Metric is the definition of one metric. Definitions are created through a
// Registry and compared by pointer.
type Metric struct {
	Name     string
	Type     Type
	Contains ValueType
	// ID is the metric's index in its registry, dense from 0, so that
	// per-metric state can live in slices instead of maps.
	ID int
}

// ValidName reports whether name is acceptable for a custom metric (k6's rule:
// a letter or underscore, then 1 to 128 letters, digits or underscores; the
// regular expression ^[a-zA-Z_][a-zA-Z0-9_]{1,128}$). It is a loop rather
// than that expression because compiling the bounded repeat ran at every
// start: 1,447 allocations and 155 KB, the heaviest of metronome's own
// package inits.
func ValidName(name string) bool {
	if len(name) < 2 || len(name) > 129 || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
