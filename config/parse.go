package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/optdecode"
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
			continue // an unknown key passes without a word, as in k6
		}
		path := "options." + key
		if s.onlyFlag != "" {
			o.Warnings = append(o.Warnings, fmt.Sprintf("%s: k6 reads this option only from %s and %s, and ignores it here; so does metronome", path, s.env, s.onlyFlag))
			continue
		}
		if err := decodeJSON(s.field(o), path, top[key]); err != nil {
			return nil, withSource(err)
		}
		if s.warn != nil {
			o.Warnings = append(o.Warnings, s.warn(path, top[key])...)
		}
		if err := s.validate(o); err != nil {
			return nil, withSource(optionError(key, path, false, err))
		}
	}
	return o, nil
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

// decodeJSON decodes raw into the option field dst points to with the
// options grammar (optdecode); errors name path. A JSON null leaves the
// field unset.
func decodeJSON(dst any, path string, raw json.RawMessage) error {
	if optdecode.IsNull(raw) {
		return nil
	}
	switch p := dst.(type) {
	case **int64:
		n, set, err := optdecode.Int(path, raw)
		if err != nil {
			return err
		}
		if set {
			*p = &n
		}
	case **bool:
		b, err := optdecode.Bool(path, raw)
		if err != nil {
			return err
		}
		*p = &b
	case **string:
		v, err := optdecode.String(path, raw)
		if err != nil {
			return err
		}
		*p = &v
	case **duration.Duration:
		d, err := optdecode.Duration(path, raw)
		if err != nil {
			return err
		}
		*p = &d
	case **TLSVersions:
		v, err := decodeTLSVersions(path, raw)
		if err != nil {
			return err
		}
		*p = &v
	case *[]TLSAuth:
		v, err := decodeTLSAuth(path, raw)
		if err != nil {
			return err
		}
		*p = v
	case *[]string:
		v, err := optdecode.Strings(path, raw)
		if err != nil {
			return err
		}
		*p = v
	case *map[string]string:
		v, err := optdecode.StringMap(path, raw)
		if err != nil {
			return err
		}
		*p = v
	case *[]Stage:
		stages, err := optdecode.Stages(path, raw)
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
		v, err := optdecode.Objects(path, raw)
		if err != nil {
			return err
		}
		*p = v
	case *DNS:
		v, err := decodeDNS(path, raw)
		if err != nil {
			return err
		}
		*p = v
	default:
		panic(fmt.Sprintf("config: %s has an unsupported field type %T", path, dst))
	}
	return nil
}

// describe renders a JSON value for "got ..." in an error.
func describe(raw json.RawMessage) string { return optdecode.Describe(raw) }

func isNull(raw json.RawMessage) bool { return optdecode.IsNull(raw) }

func sortedKeys[V any](m map[string]V) []string { return optdecode.SortedKeys(m) }

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
		return t, fmt.Errorf("%s: expected a threshold string or an object {threshold, abortOnFail, delayAbortEval, window}, got %s", path, describe(raw))
	}
	fields, err := optdecode.Object(path, raw, "threshold", "abortOnFail", "delayAbortEval", "window")
	if err != nil {
		return t, err
	}
	src, ok := fields["threshold"]
	if !ok || isNull(src) {
		return t, optdecode.Required(path + ".threshold")
	}
	if t.Source, err = optdecode.String(path+".threshold", src); err != nil {
		return t, err
	}
	if a, ok := fields["abortOnFail"]; ok && !isNull(a) {
		if t.AbortOnFail, err = optdecode.Bool(path+".abortOnFail", a); err != nil {
			return t, err
		}
	}
	if d, ok := fields["delayAbortEval"]; ok && !isNull(d) {
		dd, err := optdecode.Duration(path+".delayAbortEval", d)
		if err != nil {
			return t, err
		}
		t.DelayAbortEval = &dd
	}
	if w, ok := fields["window"]; ok && !isNull(w) {
		ww, err := optdecode.Duration(path+".window", w)
		if err != nil {
			return t, err
		}
		if ww.Std() == 0 {
			// 0 would judge the whole run, as no window does: a window
			// of nothing is a mistake, not a way to say so.
			return t, fmt.Errorf("%s.window: a window of 0s is no window; give one of at least 1s, or leave window out to judge the whole run", path)
		}
		t.Window = &ww
	}
	return t, nil
}

// UnmarshalJSON accepts both threshold forms: a string expression or an
// object {threshold, abortOnFail, delayAbortEval, window}.
func (t *Threshold) UnmarshalJSON(b []byte) error {
	v, err := jsonThreshold("threshold", b)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// MarshalJSON writes the string form unless abortOnFail, delayAbortEval or
// window is set, as k6 does for the first two. It leaves '<' and '>' unescaped, so an encoder that
// does not escape HTML writes "p(95)<200" as the user wrote it.
func (t Threshold) MarshalJSON() ([]byte, error) {
	type object Threshold
	var v any = object(t)
	if !t.AbortOnFail && t.DelayAbortEval == nil && t.Window == nil {
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
