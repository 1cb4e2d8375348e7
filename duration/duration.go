// Package duration parses and formats durations the way k6 scripts write
// them: Go duration strings with an optional leading days part ("1d2h30m"),
// or a bare number of milliseconds (a JSON number or a numeric string).
package duration

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration that reads k6's duration syntax from JSON
// and writes itself back as a Go duration string.
type Duration time.Duration

// Parse reads a k6 duration string: "", "0", "1500" (milliseconds),
// "250ms", "1m30s", "1d12h". Negative values are returned as parsed; callers
// that need a non-negative duration check it themselves.
func Parse(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return FromMillis(f)
	}
	neg := false
	rest := s
	if rest[0] == '-' || rest[0] == '+' {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	var days time.Duration
	if i := strings.IndexByte(rest, 'd'); i >= 0 {
		n, err := strconv.ParseUint(rest[:i], 10, 32)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		if n > uint64(math.MaxInt64/int64(24*time.Hour)) {
			return 0, fmt.Errorf("duration %q is too long", s)
		}
		days = time.Duration(n) * 24 * time.Hour
		rest = rest[i+1:]
	}
	var d time.Duration
	if rest != "" {
		var err error
		d, err = time.ParseDuration(rest)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
	} else if days == 0 {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	if d > math.MaxInt64-days {
		return 0, fmt.Errorf("duration %q is too long", s)
	}
	d += days
	if neg {
		d = -d
	}
	return d, nil
}

// FromMillis converts a number of milliseconds to a duration, rejecting
// values that are not finite or do not fit.
func FromMillis(ms float64) (time.Duration, error) {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return 0, fmt.Errorf("invalid duration %v", ms)
	}
	ns := ms * float64(time.Millisecond)
	if ns >= math.MaxInt64 || ns <= math.MinInt64 {
		return 0, fmt.Errorf("duration %vms is too long", ms)
	}
	return time.Duration(ns), nil
}

// ParseValue reads a duration from a decoded JSON or JavaScript value:
// a string in k6 syntax or a number of milliseconds.
func ParseValue(v any) (time.Duration, error) {
	switch x := v.(type) {
	case string:
		return Parse(x)
	case float64:
		return FromMillis(x)
	case float32:
		return FromMillis(float64(x))
	case int:
		return FromMillis(float64(x))
	case int64:
		return FromMillis(float64(x))
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", x.String())
		}
		return FromMillis(f)
	case nil:
		return 0, fmt.Errorf("duration is null")
	default:
		return 0, fmt.Errorf("a duration must be a string like \"30s\" or a number of milliseconds, not %T", v)
	}
}

// UnmarshalJSON accepts a duration string or a number of milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	p, err := ParseValue(v)
	if err != nil {
		return err
	}
	*d = Duration(p)
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// String formats the duration as Go does.
func (d Duration) String() string { return time.Duration(d).String() }

// Std returns the standard-library duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }
