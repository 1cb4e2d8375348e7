package config

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
	"github.com/metronome-load/metronome/exitcode"
)

// Parse decodes options written as JSON: a script's exported options or a
// config file. source names where they come from ("script options",
// `config file "k6.json"`) and is quoted in errors and kept in
// Options.Source.
//
// Like k6, Parse ignores top-level keys it does not know (k6 options
// metronome does not implement, "ext", "cloud" ...). Known options must
// have the right type: a wrong one is an error with exit code 104 naming
// the option path, e.g. `options.vus: expected a number, got "ten" (in
// script options)`. Scenario objects are kept as raw JSON; their executors
// check them strictly (see Scenarios). Empty input and null give empty
// options.
func Parse(raw []byte, source string) (*Options, error) {
	o := &Options{Source: source}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return o, nil
	}
	withSource := func(err error) error {
		if source == "" {
			return exitcode.Wrap(exitcode.InvalidConfig, err)
		}
		return exitcode.Errorf(exitcode.InvalidConfig, "%v (in %s)", err, source)
	}
	if raw[0] != '{' {
		if !json.Valid(raw) {
			return nil, withSource(jsonSyntaxError(raw))
		}
		return nil, withSource(fmt.Errorf("options: expected an object, got %s", describe(raw)))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, withSource(jsonSyntaxError(raw))
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		s, ok := specByName[key]
		if !ok {
			if ignoredK6[key] {
				o.Warnings = append(o.Warnings, fmt.Sprintf("options.%s: metronome does not implement this k6 option and ignores it", key))
			}
			continue
		}
		path := "options." + key
		if err := decodeJSON(s.field(o), path, top[key]); err != nil {
			return nil, withSource(err)
		}
		if err := s.validate(o); err != nil {
			return nil, withSource(optionError(key, path, false, err))
		}
	}
	return o, nil
}

// ignoredK6 are k6 options metronome does not implement. A script that
// sets one gets a warning rather than silently different behaviour
// (compat/corpus/171: k6 blocks a blacklisted address, metronome would
// send the request). Other unknown keys pass without a word, as in k6.
var ignoredK6 = map[string]bool{
	"hosts": true, "dns": true, "blacklistIPs": true, "blockHostnames": true, "localIPs": true,
	"rps": true, "tlsVersion": true, "tlsCipherSuites": true, "tlsAuth": true,
}

// jsonSyntaxError reports where raw stops being JSON, in one line.
func jsonSyntaxError(raw []byte) error {
	var v any
	err := json.Unmarshal(raw, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := position(raw, se.Offset-1)
		return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, strings.TrimPrefix(se.Error(), "json: "))
	}
	if err == nil {
		err = errors.New("not a JSON object")
	}
	return fmt.Errorf("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func position(raw []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < offset && i < int64(len(raw)); i++ {
		if raw[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// describe renders a JSON value for "got ..." in an error: short strings
// and numbers as written, objects and arrays by kind.
func describe(raw json.RawMessage) string {
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
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// decodeJSON decodes raw into the option field dst points to; errors name
// path. A JSON null leaves the field unset.
func decodeJSON(dst any, path string, raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	switch p := dst.(type) {
	case **int64:
		n, set, err := jsonInt(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if set {
			*p = &n
		}
	case **bool:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return fmt.Errorf("%s: expected true or false, got %s", path, describe(raw))
		}
		*p = &b
	case **string:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("%s: expected a string, got %s", path, describe(raw))
		}
		*p = &s
	case **duration.Duration:
		d, err := jsonDuration(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		*p = &d
	case *[]string:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("%s: expected an array of strings, got %s", path, describe(raw))
		}
		out := make([]string, len(items))
		for i, it := range items {
			if err := json.Unmarshal(it, &out[i]); err != nil {
				return fmt.Errorf("%s[%d]: expected a string, got %s", path, i, describe(it))
			}
		}
		*p = out
	case *map[string]string:
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return fmt.Errorf("%s: expected an object of strings, got %s", path, describe(raw))
		}
		out := make(map[string]string, len(fields))
		for _, k := range sortedKeys(fields) {
			var s string
			if err := json.Unmarshal(fields[k], &s); err != nil {
				return fmt.Errorf("%s.%s: expected a string, got %s", path, k, describe(fields[k]))
			}
			out[k] = s
		}
		*p = out
	case *[]Stage:
		stages, err := jsonStages(path, raw)
		if err != nil {
			return err
		}
		*p = stages
	case *map[string][]Threshold:
		th, err := jsonThresholds(path, raw)
		if err != nil {
			return err
		}
		*p = th
	case *map[string]json.RawMessage:
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return fmt.Errorf("%s: expected an object, got %s", path, describe(raw))
		}
		for _, k := range sortedKeys(fields) {
			v := bytes.TrimSpace(fields[k])
			if len(v) == 0 || v[0] != '{' {
				return fmt.Errorf("%s.%s: expected an object, got %s", path, k, describe(v))
			}
			fields[k] = json.RawMessage(slices.Clone(v))
		}
		*p = fields
	default:
		panic(fmt.Sprintf("config: %s has an unsupported field type %T", path, dst))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonInt reads a whole number. Like k6 it also takes a numeric string
// (`vus: __ENV.VUS` gives one); an empty string means unset.
func jsonInt(raw json.RawMessage) (n int64, set bool, err error) {
	raw = bytes.TrimSpace(raw)
	var text string
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, false, fmt.Errorf("expected a number, got %s", describe(raw))
		}
		text = strings.TrimSpace(text)
		if text == "" {
			return 0, false, nil
		}
	case len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')):
		text = string(raw)
	default:
		return 0, false, fmt.Errorf("expected a number, got %s", describe(raw))
	}
	n, err = wholeNumber(text)
	if err != nil {
		return 0, false, fmt.Errorf("expected a whole number, got %s", describe(raw))
	}
	return n, true, nil
}

// wholeNumber parses an integer, also written as an integral float
// ("10.0", "1e3").
func wholeNumber(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return 0, errors.New("not a whole number")
	}
	return int64(f), nil
}

func jsonDuration(raw json.RawMessage) (duration.Duration, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, fmt.Errorf("expected a duration, got %s", describe(raw))
	}
	switch v.(type) {
	case string, json.Number:
	default:
		return 0, fmt.Errorf("expected a duration such as \"30s\" or a number of milliseconds, got %s", describe(raw))
	}
	d, err := duration.ParseValue(v)
	if err != nil {
		return 0, err
	}
	return duration.Duration(d), nil
}

// strictObject decodes a JSON object whose keys must be among allowed.
func strictObject(path string, raw json.RawMessage, allowed ...string) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("%s: expected an object, got %s", path, describe(raw))
	}
	for _, k := range sortedKeys(fields) {
		if !slices.Contains(allowed, k) {
			return nil, fmt.Errorf("%s.%s: unknown field; use %s", path, k, strings.Join(allowed, ", "))
		}
	}
	return fields, nil
}

func jsonStages(path string, raw json.RawMessage) ([]Stage, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s: expected an array of {duration, target}, got %s", path, describe(raw))
	}
	stages := make([]Stage, len(items))
	for i, it := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		fields, err := strictObject(p, it, "duration", "target")
		if err != nil {
			return nil, err
		}
		d, ok := fields["duration"]
		if !ok || isNull(d) {
			return nil, fmt.Errorf("%s.duration: required", p)
		}
		if stages[i].Duration, err = jsonDuration(d); err != nil {
			return nil, fmt.Errorf("%s.duration: %w", p, err)
		}
		if t, ok := fields["target"]; ok && !isNull(t) {
			n, set, err := jsonInt(t)
			if err != nil {
				return nil, fmt.Errorf("%s.target: %w", p, err)
			}
			if set {
				stages[i].Target = &n
			}
		}
	}
	return stages, nil
}

func jsonThresholds(path string, raw json.RawMessage) (map[string][]Threshold, error) {
	var metrics map[string]json.RawMessage
	if err := json.Unmarshal(raw, &metrics); err != nil {
		return nil, fmt.Errorf("%s: expected an object mapping metric names to arrays of thresholds, got %s", path, describe(raw))
	}
	out := make(map[string][]Threshold, len(metrics))
	for _, name := range sortedKeys(metrics) {
		mp := path + "." + name
		var items []json.RawMessage
		if err := json.Unmarshal(metrics[name], &items); err != nil {
			return nil, fmt.Errorf("%s: expected an array of thresholds, got %s", mp, describe(metrics[name]))
		}
		list := make([]Threshold, len(items))
		for i, it := range items {
			p := fmt.Sprintf("%s[%d]", mp, i)
			t, err := jsonThreshold(p, it)
			if err != nil {
				return nil, err
			}
			list[i] = t
		}
		out[name] = list
	}
	return out, nil
}

func jsonThreshold(path string, raw json.RawMessage) (Threshold, error) {
	var t Threshold
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		err := json.Unmarshal(raw, &t.Source)
		return t, err
	}
	if len(raw) == 0 || raw[0] != '{' {
		return t, fmt.Errorf("%s: expected a threshold string or an object {threshold, abortOnFail, delayAbortEval}, got %s", path, describe(raw))
	}
	fields, err := strictObject(path, raw, "threshold", "abortOnFail", "delayAbortEval")
	if err != nil {
		return t, err
	}
	src, ok := fields["threshold"]
	if !ok || isNull(src) {
		return t, fmt.Errorf("%s.threshold: required", path)
	}
	if err := json.Unmarshal(src, &t.Source); err != nil {
		return t, fmt.Errorf("%s.threshold: expected a string, got %s", path, describe(src))
	}
	if a, ok := fields["abortOnFail"]; ok && !isNull(a) {
		if err := json.Unmarshal(a, &t.AbortOnFail); err != nil {
			return t, fmt.Errorf("%s.abortOnFail: expected true or false, got %s", path, describe(a))
		}
	}
	if d, ok := fields["delayAbortEval"]; ok && !isNull(d) {
		dd, err := jsonDuration(d)
		if err != nil {
			return t, fmt.Errorf("%s.delayAbortEval: %w", path, err)
		}
		t.DelayAbortEval = &dd
	}
	return t, nil
}

// UnmarshalJSON accepts both threshold forms: a string expression or an
// object {threshold, abortOnFail, delayAbortEval}.
func (t *Threshold) UnmarshalJSON(b []byte) error {
	v, err := jsonThreshold("threshold", b)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// MarshalJSON writes the string form unless abortOnFail or delayAbortEval
// is set, as k6 does. It leaves '<' and '>' unescaped, so an encoder that
// does not escape HTML writes "p(95)<200" as the user wrote it.
func (t Threshold) MarshalJSON() ([]byte, error) {
	type object Threshold
	var v any = object(t)
	if !t.AbortOnFail && t.DelayAbortEval == nil {
		v = t.Source
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
