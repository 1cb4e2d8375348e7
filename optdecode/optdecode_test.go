package optdecode

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/duration"
)

// The same mistake reads the same wherever it is made: in a typed option
// value, in a stage, or in a struct Strict decodes.
func TestOneWordingPerError(t *testing.T) {
	type stage struct {
		Duration *duration.Duration `json:"duration"`
		Target   *int64             `json:"target"`
	}
	type opts struct {
		Stages []stage `json:"stages"`
	}
	_, _, intErr := Int("a.target", json.RawMessage(`"x"`))
	_, stageErr := Stages("a", json.RawMessage(`[{"duration":"1s","target":"x"}]`))
	strictErr := Strict("a", json.RawMessage(`{"stages":[{"duration":"1s","target":"x"}]}`), &opts{})
	for _, c := range []struct {
		err  error
		want string
	}{
		{intErr, `a.target: expected a whole number, got "x"`},
		{stageErr, `a[0].target: expected a whole number, got "x"`},
		{strictErr, `a.stages[0].target: expected a whole number, got "x"`},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("got %v, want %s", c.err, c.want)
		}
	}
	_, stageErr = Stages("a", json.RawMessage(`[{"duration":"1s","tagret":1}]`))
	strictErr = Strict("a", json.RawMessage(`{"stages":[{"duration":"1s","tagret":1}]}`), &opts{})
	if stageErr == nil || strictErr == nil ||
		strings.TrimPrefix(stageErr.Error(), "a[0]") != strings.TrimPrefix(strictErr.Error(), "a.stages[0]") ||
		!strings.HasSuffix(stageErr.Error(), "unknown option; use duration, target") {
		t.Errorf("unknown stage key worded differently: %v / %v", stageErr, strictErr)
	}
	var oe *Error
	if !errors.As(strictErr, &oe) || oe.Path != "a.stages[0].tagret" {
		t.Errorf("Strict's error is not an *Error at the option path: %#v", strictErr)
	}
}

// Stages decodes, CheckStages checks ranges, and the textual form gives
// the same stages.
func TestStages(t *testing.T) {
	js, err := Stages("s", json.RawMessage(`[{"duration":"30s","target":"10"},{"duration":2000,"target":0}]`))
	if err != nil {
		t.Fatal(err)
	}
	txt, err := ParseStages("30s:10, 2s:0", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(js) != 2 || len(txt) != 2 {
		t.Fatalf("got %v and %v", js, txt)
	}
	for i := range js {
		if js[i].Duration != txt[i].Duration || *js[i].Target != *txt[i].Target {
			t.Errorf("stage %d: JSON %v/%d, text %v/%d", i, js[i].Duration, *js[i].Target, txt[i].Duration, *txt[i].Target)
		}
	}
	if js[0].Duration.Std() != 30*time.Second || *js[1].Target != 0 {
		t.Errorf("stages = %+v", js)
	}
	for _, c := range []struct {
		raw, want string
	}{
		{`[{"target":1}]`, `s[0].duration: required`},
		{`[{"duration":"1s"}]`, `s[0].target: required`},
		{`[{"duration":"-1s","target":1}]`, `s[0].duration: must not be negative, got -1s`},
		{`[{"duration":"1s","target":101}]`, `s[0].target: must be between 0 and 100, got 101`},
		{`[5]`, `s[0]: expected an object, got 5`},
		{`{}`, `s: expected an array of {duration, target}, got an object`},
	} {
		st, err := Stages("s", json.RawMessage(c.raw))
		if err == nil {
			err = CheckStages("s", st, 100)
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.raw, err, c.want)
		}
	}
	if _, err := ParseStages("1s:101", 100); err == nil || !strings.Contains(err.Error(), "between 0 and 100") {
		t.Errorf("text target above the limit: %v", err)
	}
}

// RequiredStages wants at least one stage, in the wording of a missing
// option, and checks each stage as CheckStages does.
func TestRequiredStages(t *testing.T) {
	for _, c := range []struct {
		raw, want string
	}{
		{``, `s: required`},
		{`null`, `s: required`},
		{`[]`, `s: required`},
		{`"1s:2"`, `s: expected an array of {duration, target}, got "1s:2"`},
		{`[{"duration":"1s","target":1},{"target":2}]`, `s[1].duration: required`},
		{`[{"duration":"1s","target":11}]`, `s[0].target: must be between 0 and 10, got 11`},
	} {
		_, err := RequiredStages("s", json.RawMessage(c.raw), 10)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v, want %s", c.raw, err, c.want)
		}
	}
	st, err := RequiredStages("s", json.RawMessage(`[{"duration":"1s","target":"2"},{"duration":500,"target":0}]`), 10)
	if err != nil || len(st) != 2 || *st[0].Target != 2 || st[1].Duration.Std() != 500*time.Millisecond {
		t.Errorf("got %+v, %v", st, err)
	}
}
