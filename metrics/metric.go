// Package metrics holds samples, interned tag sets, the registry of metric
// definitions and the sinks that aggregate samples into the numbers that the
// summary, thresholds and outputs read. It knows nothing of JavaScript.
package metrics

import (
	"fmt"
	"regexp"
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

var nameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{1,128}$`)

// ValidName reports whether name is acceptable for a custom metric (k6's rule:
// a letter or underscore, then 1 to 128 letters, digits or underscores).
func ValidName(name string) bool { return nameRE.MatchString(name) }
