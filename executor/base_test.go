package executor_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor"
)

// strictStage and strictOptions exercise DecodeStrict on every shape an
// executor's options can take: the embedded common options, pointers,
// fields with their own UnmarshalJSON, arrays and maps of objects, a
// ",string" field and an ignored one.
type strictStage struct {
	Duration *duration.Duration `json:"duration"`
	Target   *int64             `json:"target"`
}

type strictOptions struct {
	executor.BaseOptions
	Rate     *int64                 `json:"rate"`
	Factor   float64                `json:"factor"`
	Flag     bool                   `json:"flag"`
	TimeUnit *duration.Duration     `json:"timeUnit"`
	Stages   []strictStage          `json:"stages"`
	Limits   map[string]strictStage `json:"limits"`
	Quoted   int64                  `json:"quoted,string"`
	Blob     []byte                 `json:"blob"`
	Secret   string                 `json:"-"`
}

func TestDecodeStrictMessages(t *testing.T) {
	cases := []struct {
		raw  string
		want string // the whole message, or its start when it ends in "…"
	}{
		// A field's own UnmarshalJSON, at the top, in the embedded common
		// options, and with the key spelled as encoding/json tolerates.
		{`{"timeUnit":"1x"}`, `scenarios.x.timeUnit: invalid duration "1x"`},
		{`{"gracefulStop":"x"}`, `scenarios.x.gracefulStop: invalid duration "x"`},
		{`{"startTime":true}`, `scenarios.x.startTime: …`},
		{`{"TIMEUNIT":"1x"}`, `scenarios.x.TIMEUNIT: invalid duration "1x"`},
		// Type mismatches, worded in JSON terms.
		{`{"rate":"ten"}`, `scenarios.x.rate: expected a whole number, got "ten"`},
		{`{"rate":1.5}`, `scenarios.x.rate: expected a whole number, got 1.5`},
		{`{"factor":"x"}`, `scenarios.x.factor: expected a number, got "x"`},
		{`{"flag":1}`, `scenarios.x.flag: expected true or false, got 1`},
		{`{"exec":{}}`, `scenarios.x.exec: expected a string, got an object`},
		{`{"tags":[]}`, `scenarios.x.tags: expected an object, got an array`},
		{`{"stages":{}}`, `scenarios.x.stages: expected an array, got an object`},
		{`{"blob":1}`, `scenarios.x.blob: expected a base64 string, got 1`},
		// Inside maps and arrays the path goes down to the value.
		{`{"env":{"A":"1","B":2}}`, `scenarios.x.env.B: expected a string, got 2`},
		{`{"stages":[{"target":1},{"target":"2"}]}`, `scenarios.x.stages[1].target: expected a whole number, got "2"`},
		{`{"stages":[{"duration":"1s"},{"duration":"2x"}]}`, `scenarios.x.stages[1].duration: invalid duration "2x"`},
		{`{"stages":[{"target":1,"rate":2}]}`, `scenarios.x.stages[0].rate: unknown option; use duration, target`},
		{`{"limits":{"api":{"duration":"q"}}}`, `scenarios.x.limits.api.duration: invalid duration "q"`},
		// Unknown options, including one the struct hides from JSON.
		{`{"bogus":1}`, `scenarios.x.bogus: unknown option; use executor, …`},
		{`{"secret":"s"}`, `scenarios.x.secret: unknown option; use executor, …`},
		{`{"quoted":"x"}`, `scenarios.x.quoted: …`},
		// The first failing option in document order is named, whichever
		// kind of failure the decoder would have stopped at.
		{`{"rate":"x","timeUnit":"1x"}`, `scenarios.x.rate: expected a whole number, got "x"`},
		{`{"timeUnit":"1x","rate":"x"}`, `scenarios.x.timeUnit: invalid duration "1x"`},
		{`{"bogus":1,"timeUnit":"1x"}`, `scenarios.x.bogus: unknown option; use executor, …`},
		{`{"rate":1,"rate":"x"}`, `scenarios.x.rate: expected a whole number, got "x"`},
		// The object itself.
		{`[1]`, `scenarios.x: expected an object, got an array`},
		{`"api"`, `scenarios.x: expected an object, got "api"`},
		{`{"rate":1} {}`, `scenarios.x: unexpected data after the options object`},
		{`{"rate":`, `scenarios.x: …`},
	}
	for _, c := range cases {
		var o strictOptions
		err := executor.DecodeStrict("x", json.RawMessage(c.raw), &o)
		if err == nil {
			t.Errorf("%s: decoded, want an error", c.raw)
			continue
		}
		got := err.Error()
		if prefix, ok := strings.CutSuffix(c.want, "…"); ok {
			if !strings.HasPrefix(got, prefix) || len(got) <= len(prefix) {
				t.Errorf("%s:\n got %q\nwant %q followed by the reason", c.raw, got, prefix)
			}
		} else if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.raw, got, c.want)
		}
		if strings.Contains(got, "\n") || strings.Contains(got, "json:") || strings.Contains(got, "BaseOptions") {
			t.Errorf("%s: %q speaks Go, or is not one line", c.raw, got)
		}
	}
}

func TestDecodeStrictAccepts(t *testing.T) {
	var o strictOptions
	raw := `{"executor":"e","gracefulStop":"2s","env":{"A":"b"},"rate":5,"timeUnit":"1m",
		"stages":[{"duration":"3s","target":4}],"limits":{"api":{"target":1}},"quoted":"12","exec":null}`
	if err := executor.DecodeStrict("x", json.RawMessage(raw), &o); err != nil {
		t.Fatal(err)
	}
	if o.Executor != "e" || *o.GracefulStop != duration.Duration(2*time.Second) || o.Env["A"] != "b" || *o.Rate != 5 ||
		o.TimeUnit.Std() != time.Minute || len(o.Stages) != 1 || *o.Stages[0].Target != 4 ||
		*o.Limits["api"].Target != 1 || o.Quoted != 12 || o.Exec != nil {
		t.Errorf("decoded %+v", o)
	}
	if err := executor.DecodeStrict("x", json.RawMessage(`null`), &o); err != nil {
		t.Errorf("null: %v", err)
	}
}

// The path given for a nested object prefixes the failing member, and the
// decoder's error stays reachable with errors.As.
func TestDecodeStrictNestedPathAndUnwrap(t *testing.T) {
	var st strictStage
	err := executor.DecodeStrict("api.stages[2]", json.RawMessage(`{"duration":"1s","target":"4"}`), &st)
	if err == nil || err.Error() != `scenarios.api.stages[2].target: expected a whole number, got "4"` {
		t.Fatalf("got %v", err)
	}
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		t.Errorf("%v does not wrap the *json.UnmarshalTypeError", err)
	}
}

// Every registered executor's options name the failing option, for the
// common options it embeds and for its own.
func TestDecodeStrictEveryExecutor(t *testing.T) {
	minimal := map[string]string{
		"constant-vus":          `"duration":"10s"`,
		"shared-iterations":     `"iterations":1`,
		"per-vu-iterations":     `"iterations":1`,
		"ramping-vus":           `"stages":[{"duration":"1s","target":1}]`,
		"constant-arrival-rate": `"rate":1,"duration":"1s","preAllocatedVUs":1`,
		"ramping-arrival-rate":  `"stages":[{"duration":"1s","target":1}],"preAllocatedVUs":1`,
		"intended-arrival-rate": `"rate":1,"duration":"1s","preAllocatedVUs":1`,
	}
	for name, opts := range minimal {
		if _, ok := executor.Lookup(name); !ok {
			t.Errorf("executor %q is not registered", name)
			continue
		}
		cases := []struct{ extra, want string }{
			{`"gracefulStop":"1x"`, `scenarios.test.gracefulStop: invalid duration "1x"`},
			{`"startTime":"-"`, `scenarios.test.startTime: invalid duration "-"`},
			{`"env":{"A":1}`, `scenarios.test.env.A: expected a string, got 1`},
			{`"tags":{"a":"b","c":[]}`, `scenarios.test.tags.c: expected a string, got an array`},
			{`"bogus":true`, `scenarios.test.bogus: unknown option; use executor, startTime, gracefulStop, exec, env, tags, options, …`},
		}
		if strings.Contains(name, "arrival") {
			cases = append(cases,
				struct{ extra, want string }{`"timeUnit":"1x"`, `scenarios.test.timeUnit: invalid duration "1x"`},
				struct{ extra, want string }{`"maxVUs":"2"`, `scenarios.test.maxVUs: expected a whole number, got "2"`})
		} else {
			cases = append(cases,
				struct{ extra, want string }{`"expectedInterval":"1x"`, `scenarios.test.expectedInterval: must be "auto", "off" or a duration such as "10ms", got "1x"`})
		}
		for _, c := range cases {
			js := fmt.Sprintf(`{"executor":%q,%s,%s}`, name, opts, c.extra)
			_, err := parse(js)
			if prefix, ok := strings.CutSuffix(c.want, "…"); ok && err != nil && strings.HasPrefix(err.Error(), prefix) {
				continue
			}
			if err == nil || err.Error() != c.want {
				t.Errorf("%s:\n got %v\nwant %s", js, err, c.want)
			}
		}
		if _, err := parse(fmt.Sprintf(`{"executor":%q,%s}`, name, opts)); err != nil {
			t.Errorf("%s: the minimal options do not parse: %v", name, err)
		}
	}
}
