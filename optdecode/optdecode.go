// Package optdecode is metronome's one options grammar: the strict
// decoding of option values written as JSON (a config file, a script's
// exported options, a scenario's object, an extension executor's options)
// or as text (K6_* variables, flags), with one wording per error and the
// option path in each, e.g.
//
//	scenarios.api.stages[2].target: expected a whole number, got "x"
//	options.stages[0].tagret: unknown option; use duration, target
//
// config decodes its option table with it and executor's DecodeStrict, the
// hook every executor (built-in or extension) parses its scenario with, is
// backed by Strict. Stages, which both the stages option and the ramping
// executors take, have their one parser here too.
package optdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/metronome-load/metronome/duration"
)

// Error is a decoding failure at an option path. It wraps the cause, so
// errors.As still finds a field's own error or the *json.UnmarshalTypeError.
type Error struct {
	// Path is the option path, e.g. "scenarios.api.rate" or
	// "options.stages[1].target".
	Path string
	// Msg is what is wrong, worded for someone who wrote JSON or a flag.
	Msg string
	Err error
}

func (e *Error) Error() string { return e.Path + ": " + e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error at path.
func Errorf(path, format string, args ...any) error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// wrap words err at path: an *Error below path keeps its own path; an
// error of the duration parser or a field's UnmarshalJSON is quoted.
func wrap(path string, err error) error {
	var oe *Error
	if errors.As(err, &oe) {
		return err
	}
	return &Error{Path: path, Msg: strings.TrimPrefix(err.Error(), "json: "), Err: err}
}

// The wording of the errors every option shares.
func expected(path, kind string, raw json.RawMessage) error {
	return &Error{Path: path, Msg: "expected " + kind + ", got " + Describe(raw)}
}

func unknownOption(path string, allowed []string) error {
	if len(allowed) == 0 {
		return &Error{Path: path, Msg: "unknown option"}
	}
	return &Error{Path: path, Msg: "unknown option; use " + strings.Join(allowed, ", ")}
}

// Required is the error of an option that must be set.
func Required(path string) error { return &Error{Path: path, Msg: "required"} }

// Describe renders a JSON value for "got ..." in an error: short strings
// and numbers as written, objects and arrays by kind.
func Describe(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return strconv.Quote(truncate(s))
		}
	}
	return truncate(string(raw))
}

func truncate(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// IsNull reports whether raw is JSON null.
func IsNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// Int reads a whole number at path. Like k6 it also takes a numeric string
// (`vus: __ENV.VUS` gives one) and an integral float ("10.0", 1e3); an
// empty string means unset.
func Int(path string, raw json.RawMessage) (n int64, set bool, err error) {
	raw = bytes.TrimSpace(raw)
	var text string
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, false, expected(path, "a whole number", raw)
		}
		text = strings.TrimSpace(text)
		if text == "" {
			return 0, false, nil
		}
	case len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')):
		text = string(raw)
	default:
		return 0, false, expected(path, "a whole number", raw)
	}
	n, err = WholeNumber(text)
	if err != nil {
		return 0, false, expected(path, "a whole number", raw)
	}
	return n, true, nil
}

// WholeNumber parses an integer, also written as an integral float
// ("10.0", "1e3").
func WholeNumber(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return 0, errors.New("not a whole number")
	}
	return int64(f), nil
}

// Bool reads true or false at path.
func Bool(path string, raw json.RawMessage) (bool, error) {
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, expected(path, "true or false", raw)
	}
	return b, nil
}

// String reads a string at path.
func String(path string, raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", expected(path, "a string", raw)
	}
	return s, nil
}

// Duration reads a duration at path: a string such as "30s" or "1m30s",
// or a number of milliseconds.
func Duration(path string, raw json.RawMessage) (duration.Duration, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, expected(path, "a duration", raw)
	}
	switch v.(type) {
	case string, json.Number:
	default:
		return 0, expected(path, `a duration such as "30s" or a number of milliseconds`, raw)
	}
	d, err := duration.ParseValue(v)
	if err != nil {
		return 0, wrap(path, err)
	}
	return duration.Duration(d), nil
}

// Strings reads an array of strings at path.
func Strings(path string, raw json.RawMessage) ([]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, expected(path, "an array of strings", raw)
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, err := String(fmt.Sprintf("%s[%d]", path, i), it)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// StringMap reads an object of strings at path.
func StringMap(path string, raw json.RawMessage) (map[string]string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, expected(path, "an object of strings", raw)
	}
	out := make(map[string]string, len(fields))
	for _, k := range SortedKeys(fields) {
		s, err := String(path+"."+k, fields[k])
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

// Objects reads an object whose members are objects, kept as raw JSON
// (scenarios: each executor decodes its own).
func Objects(path string, raw json.RawMessage) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, expected(path, "an object", raw)
	}
	for _, k := range SortedKeys(fields) {
		v := bytes.TrimSpace(fields[k])
		if len(v) == 0 || v[0] != '{' {
			return nil, expected(path+"."+k, "an object", v)
		}
		fields[k] = json.RawMessage(slices.Clone(v))
	}
	return fields, nil
}

// Object reads a JSON object at path whose keys must be among allowed.
func Object(path string, raw json.RawMessage, allowed ...string) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, expected(path, "an object", raw)
	}
	for _, k := range SortedKeys(fields) {
		if !slices.Contains(allowed, k) {
			return nil, unknownOption(path+"."+k, allowed)
		}
	}
	return fields, nil
}

// SortedKeys returns m's keys in order, so that the first error is stable.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
