package optdecode

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/metronome-load/metronome/duration"
)

// The textual forms, as K6_* variables and flags write option values. Their
// errors quote the value and name no option: the caller names the variable
// or flag the user typed.

// TextInt reads a whole number: "10".
func TextInt(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return n, nil
}

// TextBool reads true/false, 1/0 and the other forms of strconv.ParseBool.
func TextBool(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%q is not true or false", s)
	}
	return b, nil
}

// TextDuration reads "30s", "1m30s", "1d2h" or a bare number of
// milliseconds.
func TextDuration(s string) (duration.Duration, error) {
	d, err := duration.Parse(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 30s, 1m30s or 1d2h", s)
	}
	return duration.Duration(d), nil
}

// SplitList splits a comma-separated list, trimming spaces and dropping
// empty items; "" gives an empty, non-nil list.
func SplitList(s string) []string {
	out := []string{}
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
