// Package metrics is k6's metrics API over metronome's metrics engine:
// metrics defined through a Registry are metronome's own metrics (so
// thresholds, the summary, every output and result files see them), tag
// sets are metronome's interned ones, and samples pushed to a VU's
// lib.State.Samples reach the run's engine.
package metrics

import (
	"encoding/json"
	"errors"
	"time"

	"gopkg.in/guregu/null.v3"

	mm "github.com/metronome-load/metronome/metrics"
)

// MetricType is the kind of a metric.
type MetricType int

// The kinds of metric, in k6's order.
const (
	Counter = MetricType(iota) // sums its values
	Gauge                      // keeps the last value, and the smallest and largest
	Trend                      // keeps every value for its statistics and percentiles
	Rate                       // the share of values that are not zero
)

// ErrInvalidMetricType is the error of a metric type that has no name.
var ErrInvalidMetricType = errors.New("invalid metric type")

var metricTypeNames = [...]string{Counter: "counter", Gauge: "gauge", Trend: "trend", Rate: "rate"}

// MarshalText writes the type's name.
func (t MetricType) MarshalText() ([]byte, error) {
	if t < 0 || int(t) >= len(metricTypeNames) {
		return nil, ErrInvalidMetricType
	}
	return []byte(metricTypeNames[t]), nil
}

// MarshalJSON writes the type's name as a JSON string.
func (t MetricType) MarshalJSON() ([]byte, error) {
	b, err := t.MarshalText()
	if err != nil {
		return nil, err
	}
	return json.Marshal(string(b))
}

// UnmarshalText reads a type's name.
func (t *MetricType) UnmarshalText(data []byte) error {
	for i, n := range metricTypeNames {
		if n == string(data) {
			*t = MetricType(i)
			return nil
		}
	}
	return ErrInvalidMetricType
}

// String is the type's name, "[INVALID]" for a type without one.
func (t MetricType) String() string {
	if b, err := t.MarshalText(); err == nil {
		return string(b)
	}
	return "[INVALID]"
}

// ValueType says what a metric's values measure.
type ValueType int

// The value types: plain numbers, times in milliseconds, bytes.
const (
	Default = ValueType(iota)
	Time
	Data
)

// ErrInvalidValueType is the error of a value type that has no name.
var ErrInvalidValueType = errors.New("invalid value type")

var valueTypeNames = [...]string{Default: "default", Time: "time", Data: "data"}

// MarshalText writes the value type's name.
func (t ValueType) MarshalText() ([]byte, error) {
	if t < 0 || int(t) >= len(valueTypeNames) {
		return nil, ErrInvalidValueType
	}
	return []byte(valueTypeNames[t]), nil
}

// MarshalJSON writes the value type's name as a JSON string.
func (t ValueType) MarshalJSON() ([]byte, error) {
	b, err := t.MarshalText()
	if err != nil {
		return nil, err
	}
	return json.Marshal(string(b))
}

// UnmarshalText reads a value type's name.
func (t *ValueType) UnmarshalText(data []byte) error {
	for i, n := range valueTypeNames {
		if n == string(data) {
			*t = ValueType(i)
			return nil
		}
	}
	return ErrInvalidValueType
}

// String is the value type's name, "[INVALID]" for one without.
func (t ValueType) String() string {
	if b, err := t.MarshalText(); err == nil {
		return string(b)
	}
	return "[INVALID]"
}

// Metric is a metric's definition. Metrics made by a Registry are
// metronome's metrics of the same name; compare them by pointer.
type Metric struct {
	Name     string     `json:"name"`
	Type     MetricType `json:"type"`
	Contains ValueType  `json:"contains"`

	Tainted    null.Bool    `json:"tainted"`
	Thresholds Thresholds   `json:"thresholds"`
	Submetrics []*Submetric `json:"submetrics"`
	Sub        *Submetric   `json:"-"`
	// Sink is nil: metronome's engine aggregates the samples.
	Sink     Sink `json:"-"`
	Observed bool `json:"-"`

	// m is metronome's metric behind this one, from registry.
	m        *mm.Metric
	registry *mm.Registry
}

// Submetric is the part of a metric whose samples carry some tags.
type Submetric struct {
	Name   string  `json:"name"`
	Suffix string  `json:"suffix"`
	Tags   *TagSet `json:"tags"`

	Metric *Metric `json:"-"`
	Parent *Metric `json:"-"`
}

// D converts a duration into k6's unit of time metrics, milliseconds.
func D(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ToD converts milliseconds back into a duration.
func ToD(d float64) time.Duration { return time.Duration(d * float64(time.Millisecond)) }

// B is 1 for true and 0 for false, a Rate metric's values.
func B(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
