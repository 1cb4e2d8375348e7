package metrics

import (
	"encoding/json"

	"go.k6.io/k6/v2/lib/types"
)

// Threshold is one threshold of a metric, as the options give it.
// metronome's engine evaluates thresholds; these carry their definition.
type Threshold struct {
	// Source is the threshold's expression, such as "p(95)<200".
	Source string
	// LastFailed is whether the last evaluation failed.
	LastFailed bool
	// AbortOnFail stops the test when the threshold fails.
	AbortOnFail bool
	// AbortGracePeriod is how long into the test a failure does not abort.
	AbortGracePeriod types.NullDuration
}

// Thresholds are the thresholds of one metric.
type Thresholds struct {
	Thresholds []*Threshold
	Abort      bool
}

// NewThresholds returns the thresholds of the expressions sources.
func NewThresholds(sources []string) Thresholds {
	ts := Thresholds{Thresholds: make([]*Threshold, len(sources))}
	for i, s := range sources {
		ts.Thresholds[i] = &Threshold{Source: s}
	}
	return ts
}

// thresholdJSON is one threshold as the options write it.
type thresholdJSON struct {
	Threshold        string             `json:"threshold"`
	AbortOnFail      bool               `json:"abortOnFail"`
	AbortGracePeriod types.NullDuration `json:"delayAbortEval"`
}

// MarshalJSON writes the thresholds as the options do: an expression
// alone, or an object when it aborts.
func (ts Thresholds) MarshalJSON() ([]byte, error) {
	list := make([]any, len(ts.Thresholds))
	for i, t := range ts.Thresholds {
		if t.AbortOnFail {
			list[i] = thresholdJSON{t.Source, t.AbortOnFail, t.AbortGracePeriod}
		} else {
			list[i] = t.Source
		}
	}
	return MarshalJSONWithoutHTMLEscape(list)
}

// UnmarshalJSON reads thresholds as the options write them.
func (ts *Thresholds) UnmarshalJSON(data []byte) error {
	var list []json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	out := Thresholds{Thresholds: make([]*Threshold, len(list))}
	for i, raw := range list {
		var c thresholdJSON
		if err := json.Unmarshal(raw, &c.Threshold); err != nil {
			if err := json.Unmarshal(raw, &c); err != nil {
				return err
			}
		}
		out.Thresholds[i] = &Threshold{Source: c.Threshold, AbortOnFail: c.AbortOnFail, AbortGracePeriod: c.AbortGracePeriod}
	}
	*ts = out
	return nil
}
