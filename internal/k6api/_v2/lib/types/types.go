// Package types holds k6's duration types: durations as k6 scripts and
// options write them (a Go duration with an optional days part, or a
// number of milliseconds), plain and nullable.
package types

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/metronome-load/metronome/duration"
)

// Duration is a time.Duration that reads k6's syntax and writes itself
// as a Go duration string.
type Duration time.Duration

// String formats the duration as Go does.
func (d Duration) String() string { return time.Duration(d).String() }

// TimeDuration returns the standard-library duration.
func (d Duration) TimeDuration() time.Duration { return time.Duration(d) }

// ParseExtendedDuration reads a duration in k6's syntax: "1500" (ms),
// "250ms", "1m30s", "2d12h".
func ParseExtendedDuration(data string) (time.Duration, error) { return duration.Parse(data) }

// UnmarshalText reads a duration in k6's syntax.
func (d *Duration) UnmarshalText(data []byte) error {
	v, err := ParseExtendedDuration(string(data))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// UnmarshalJSON reads a string in k6's syntax or a number of milliseconds.
func (d *Duration) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		return d.UnmarshalText([]byte(s))
	}
	var ms float64
	if err := json.Unmarshal(data, &ms); err != nil {
		return fmt.Errorf("'%s' is not a valid duration value", string(data))
	}
	v, err := duration.FromMillis(ms)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// NullDuration is a Duration that may be unset.
type NullDuration struct {
	Duration
	Valid bool
}

// NewNullDuration returns d, set when valid.
func NewNullDuration(d time.Duration, valid bool) NullDuration {
	return NullDuration{Duration(d), valid}
}

// NullDurationFrom returns d, set.
func NullDurationFrom(d time.Duration) NullDuration { return NullDuration{Duration(d), true} }

// UnmarshalText reads a duration in k6's syntax; empty text unsets it.
func (d *NullDuration) UnmarshalText(data []byte) error {
	if len(data) == 0 {
		*d = NullDuration{}
		return nil
	}
	if err := d.Duration.UnmarshalText(data); err != nil {
		return err
	}
	d.Valid = true
	return nil
}

// UnmarshalJSON reads a duration as Duration does; null unsets it.
func (d *NullDuration) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		d.Valid = false
		return nil
	}
	if err := d.Duration.UnmarshalJSON(data); err != nil {
		return err
	}
	d.Valid = true
	return nil
}

// MarshalJSON writes the duration, null when unset.
func (d NullDuration) MarshalJSON() ([]byte, error) {
	if !d.Valid {
		return []byte("null"), nil
	}
	return d.Duration.MarshalJSON()
}

// ValueOrZero returns the duration, zero when unset.
func (d NullDuration) ValueOrZero() Duration {
	if !d.Valid {
		return 0
	}
	return d.Duration
}

// TimeDuration returns the standard-library duration (zero's or the
// value kept when unset, as k6 does).
func (d NullDuration) TimeDuration() time.Duration { return time.Duration(d.Duration) }

// GetDurationValue reads a duration from a Go or JavaScript value: a
// time.Duration, a string in k6's syntax, or a number of milliseconds.
func GetDurationValue(v any) (time.Duration, error) {
	switch x := v.(type) {
	case time.Duration:
		return x, nil
	case string:
		return ParseExtendedDuration(x)
	case float32:
		return duration.FromMillis(float64(x))
	case float64:
		return duration.FromMillis(x)
	case int:
		return time.Duration(x) * time.Millisecond, nil
	case int8:
		return time.Duration(x) * time.Millisecond, nil
	case int16:
		return time.Duration(x) * time.Millisecond, nil
	case int32:
		return time.Duration(x) * time.Millisecond, nil
	case int64:
		return time.Duration(x) * time.Millisecond, nil
	case uint:
		return time.Duration(x) * time.Millisecond, nil
	case uint8:
		return time.Duration(x) * time.Millisecond, nil
	case uint16:
		return time.Duration(x) * time.Millisecond, nil
	case uint32:
		return time.Duration(x) * time.Millisecond, nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%d is too big", x)
		}
		return time.Duration(x) * time.Millisecond, nil
	}
	return 0, fmt.Errorf("unable to use type %T as a duration value", v)
}
