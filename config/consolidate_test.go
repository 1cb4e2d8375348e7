package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/exitcode"
)

func mustParse(t *testing.T, raw, source string) *Options {
	t.Helper()
	if raw == "" {
		return nil
	}
	o, err := Parse([]byte(raw), source)
	if err != nil {
		t.Fatalf("%s: %v", source, err)
	}
	return o
}

func mustEnv(t *testing.T, env map[string]string) *Options {
	t.Helper()
	if env == nil {
		return nil
	}
	o, err := FromEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// flagTier builds the flags tier the way the CLI does: Set per flag.
func flagTier(t *testing.T, kv ...string) *Options {
	t.Helper()
	if len(kv) == 0 {
		return nil
	}
	o := &Options{Source: "command-line flags"}
	for i := 0; i < len(kv); i += 2 {
		if err := o.Set(kv[i], kv[i+1]); err != nil {
			t.Fatalf("%s=%s: %v", kv[i], kv[i+1], err)
		}
	}
	return o
}

func TestPrecedence(t *testing.T) {
	// Each tier sets userAgent to its own name when it takes part; the
	// highest participating tier must win, defaults when none does.
	tiers := []string{"file", "script", "env", "flags"}
	for mask := 0; mask < 1<<len(tiers); mask++ {
		var file, script, env, flags *Options
		want := DefaultUserAgent()
		for i, name := range tiers {
			if mask&(1<<i) == 0 {
				continue
			}
			want = name
			switch name {
			case "file":
				file = mustParse(t, `{"userAgent": "file", "setupTimeout": "1s", "tags": {"from": "file"}}`, "config file")
			case "script":
				script = mustParse(t, `{"userAgent": "script", "setupTimeout": "2s", "tags": {"from": "script"}}`, "script options")
			case "env":
				env = mustEnv(t, map[string]string{"K6_USER_AGENT": "env", "K6_SETUP_TIMEOUT": "3s", "K6_TAGS": "from=env"})
			case "flags":
				flags = flagTier(t, "userAgent", "flags", "setupTimeout", "4s", "tags", "from=flags")
			}
		}
		o, err := Consolidate(file, script, env, flags)
		if err != nil {
			t.Fatal(err)
		}
		if *o.UserAgent != want {
			t.Errorf("tiers %04b: userAgent = %q, want %q", mask, *o.UserAgent, want)
		}
		wantTimeout := map[string]time.Duration{"file": time.Second, "script": 2 * time.Second, "env": 3 * time.Second,
			"flags": 4 * time.Second}[want]
		if want == DefaultUserAgent() {
			wantTimeout = DefaultSetupTimeout
		}
		if o.SetupTimeout.Std() != wantTimeout {
			t.Errorf("tiers %04b: setupTimeout = %s, want %s", mask, o.SetupTimeout, wantTimeout)
		}
		if want != DefaultUserAgent() && o.Tags["from"] != want {
			t.Errorf("tiers %04b: tags = %v, want from=%s", mask, o.Tags, want)
		}
	}
}

func TestDefaults(t *testing.T) {
	o, err := Consolidate()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.SystemTags, DefaultSystemTags) || !reflect.DeepEqual(o.SummaryTrendStats, []string{"avg", "min", "med", "max", "p(90)", "p(95)"}) {
		t.Errorf("systemTags %v, summaryTrendStats %v", o.SystemTags, o.SummaryTrendStats)
	}
	if o.SetupTimeout.Std() != time.Minute || o.TeardownTimeout.Std() != time.Minute || o.HandleSummaryTimeout.Std() != 2*time.Minute {
		t.Errorf("timeouts %s %s %s", o.SetupTimeout, o.TeardownTimeout, o.HandleSummaryTimeout)
	}
	if *o.MaxRedirects != 10 || *o.Batch != 20 || *o.BatchPerHost != 6 {
		t.Errorf("maxRedirects %d batch %d batchPerHost %d", *o.MaxRedirects, *o.Batch, *o.BatchPerHost)
	}
	if *o.UserAgent != "metronome/"+Version+" (k6-compatible)" {
		t.Errorf("userAgent %q", *o.UserAgent)
	}
	if o.VUs != nil || o.Duration != nil || o.Iterations != nil || o.Stages != nil || o.Scenarios != nil {
		t.Error("defaults must not set any shortcut option")
	}
	// An explicitly empty list is kept: no system tags at all.
	o, err = Consolidate(mustParse(t, `{"systemTags": []}`, "script options"))
	if err != nil {
		t.Fatal(err)
	}
	if o.SystemTags == nil || len(o.SystemTags) != 0 {
		t.Errorf("systemTags [] became %v", o.SystemTags)
	}
}

func TestApplyDoesNotModifyInputs(t *testing.T) {
	low := mustParse(t, `{"vus": 2, "duration": "10s", "tags": {"a": "1"}}`, "low")
	high := mustParse(t, `{"iterations": 5, "tags": {"b": "2"}}`, "high")
	r := low.Apply(high)
	if low.Duration == nil || low.Tags["a"] != "1" || len(low.Tags) != 1 {
		t.Error("Apply modified the lower tier")
	}
	r.Tags["c"] = "3"
	if _, ok := high.Tags["c"]; ok {
		t.Error("the result shares the higher tier's map")
	}
	if r.Duration != nil || *r.Iterations != 5 || *r.VUs != 2 {
		t.Errorf("result %+v", r)
	}
	if got := (*Options)(nil).Apply(nil); got == nil {
		t.Error("nil.Apply(nil) returned nil")
	}
}

func TestApplyTagsReplaceOnlyWhenNonEmpty(t *testing.T) {
	low := &Options{Tags: map[string]string{"a": "1"}}
	if r := low.Apply(&Options{Tags: map[string]string{}}); r.Tags["a"] != "1" {
		t.Errorf("an empty tag map replaced the lower one: %v", r.Tags)
	}
	if r := low.Apply(&Options{Tags: map[string]string{"b": "2"}}); !reflect.DeepEqual(r.Tags, map[string]string{"b": "2"}) {
		t.Errorf("tags merged instead of replaced: %v", r.Tags)
	}
}

// scenarioOf resolves o and returns the default scenario decoded.
func scenarioOf(t *testing.T, o *Options) map[string]any {
	t.Helper()
	sc, err := o.ResolveScenarios()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(sc[DefaultScenarioName], &m); err != nil {
		t.Fatalf("default scenario %s: %v", sc[DefaultScenarioName], err)
	}
	if len(sc) != 1 {
		t.Fatalf("want only the default scenario, got %d", len(sc))
	}
	return m
}

func TestShortcuts(t *testing.T) {
	cases := []struct {
		name   string
		file   string
		script string
		env    map[string]string
		flags  []string
		want   map[string]any
	}{
		{name: "-u 10 -d 30s", flags: []string{"vus", "10", "duration", "30s"},
			want: map[string]any{"executor": "constant-vus", "vus": 10.0, "duration": "30s"}},
		{name: "-u 10 -i 100", flags: []string{"vus", "10", "iterations", "100"},
			want: map[string]any{"executor": "shared-iterations", "vus": 10.0, "iterations": 100.0}},
		{name: "-i 100 -d 1m", flags: []string{"iterations", "100", "duration", "1m"},
			want: map[string]any{"executor": "shared-iterations", "iterations": 100.0, "maxDuration": "1m0s"}},
		{name: "-u 10 alone", flags: []string{"vus", "10"},
			want: map[string]any{"executor": "shared-iterations", "vus": 10.0, "iterations": 10.0}},
		{name: "--stage 10s:5", flags: []string{"stages", "10s:5"},
			want: map[string]any{"executor": "ramping-vus", "startVUs": 1.0,
				"stages": []any{map[string]any{"duration": "10s", "target": 5.0}}}},
		{name: "-u 3 --stage 10s:5,1m:0", flags: []string{"vus", "3", "stages", "10s:5,1m:0"},
			want: map[string]any{"executor": "ramping-vus", "startVUs": 3.0, "stages": []any{
				map[string]any{"duration": "10s", "target": 5.0}, map[string]any{"duration": "1m0s", "target": 0.0}}}},
		{name: "nothing",
			want: map[string]any{"executor": "per-vu-iterations", "vus": 1.0, "iterations": 1.0}},
		{name: "script duration only", script: `{"duration": "1m"}`,
			want: map[string]any{"executor": "constant-vus", "duration": "1m0s"}},
		{name: "flag iterations wipe script vus+duration duration only", script: `{"vus": 10, "duration": "30s"}`, flags: []string{"iterations", "100"},
			want: map[string]any{"executor": "shared-iterations", "vus": 10.0, "iterations": 100.0}},
		{name: "env duration wipes script stages", script: `{"stages": [{"duration": "5s", "target": 3}]}`, env: map[string]string{"K6_DURATION": "20s"},
			want: map[string]any{"executor": "constant-vus", "duration": "20s"}},
		{name: "flag stages wipe script scenarios", script: `{"scenarios": {"a": {"executor": "constant-vus"}}}`, flags: []string{"stages", "1s:1"},
			want: map[string]any{"executor": "ramping-vus", "startVUs": 1.0, "stages": []any{map[string]any{"duration": "1s", "target": 1.0}}}},
		{name: "flag vus overrides script scenarios", script: `{"scenarios": {"a": {"executor": "constant-vus"}}}`, flags: []string{"vus", "4"},
			want: map[string]any{"executor": "shared-iterations", "vus": 4.0, "iterations": 4.0}},
		{name: "flag vus keeps script duration", script: `{"vus": 2, "duration": "30s"}`, flags: []string{"vus", "20"},
			want: map[string]any{"executor": "constant-vus", "vus": 20.0, "duration": "30s"}},
		{name: "config file iterations, script nothing", file: `{"iterations": 7}`,
			want: map[string]any{"executor": "shared-iterations", "iterations": 7.0}},
		{name: "script duration wipes config file iterations", file: `{"iterations": 7}`, script: `{"duration": "9s"}`,
			want: map[string]any{"executor": "constant-vus", "duration": "9s"}},
		{name: "explicitly empty stages", script: `{"stages": []}`,
			want: map[string]any{"executor": "per-vu-iterations", "vus": 1.0, "iterations": 1.0}},
		{name: "explicitly empty scenarios", script: `{"scenarios": {}}`,
			want: map[string]any{"executor": "per-vu-iterations", "vus": 1.0, "iterations": 1.0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := Consolidate(mustParse(t, c.file, "config file"), mustParse(t, c.script, "script options"), mustEnv(t, c.env), flagTier(t, c.flags...))
			if err != nil {
				t.Fatal(err)
			}
			if got := scenarioOf(t, o); !reflect.DeepEqual(got, c.want) {
				t.Errorf("default scenario\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestUserScenariosKept(t *testing.T) {
	// vus next to scenarios in the same tier is ignored, as in k6.
	o, err := Consolidate(mustParse(t, `{"vus": 5, "scenarios": {"a": {"executor": "x"}, "b": {"executor": "y"}}}`, "script options"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := o.ResolveScenarios()
	if err != nil {
		t.Fatal(err)
	}
	if len(sc) != 2 || string(sc["a"]) != `{"executor": "x"}` {
		t.Errorf("scenarios = %v", sc)
	}
	if len(o.Warnings) != 0 {
		t.Errorf("unexpected warnings %q", o.Warnings)
	}
}

func TestOverrideWarnings(t *testing.T) {
	script := mustParse(t, `{"scenarios": {"a": {"executor": "x"}}}`, "script options")
	o, err := Consolidate(script, flagTier(t, "vus", "3"))
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "scenarios from script options are replaced by vus set in command-line flags") {
		t.Errorf("warnings = %q", o.Warnings)
	}
	o, err = Consolidate(script, mustEnv(t, map[string]string{"K6_ITERATIONS": "3", "K6_DURATION": "1m"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "replaced by duration, iterations set in environment") {
		t.Errorf("warnings = %q", o.Warnings)
	}
	o, err = Consolidate(mustParse(t, `{"stages": []}`, "script options"))
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "options.stages is explicitly empty") {
		t.Errorf("warnings = %q", o.Warnings)
	}
}

func TestShortcutConflicts(t *testing.T) {
	cases := []struct{ script, want string }{
		{`{"iterations": 5, "stages": [{"duration": "1s", "target": 1}]}`, "options.iterations and options.stages cannot be used together (both set in script options)"},
		{`{"iterations": 5, "scenarios": {"a": {"executor": "x"}}}`, "options.iterations and options.scenarios"},
		{`{"iterations": 5, "scenarios": {}}`, "options.iterations and options.scenarios"},
		{`{"duration": "5s", "stages": [{"duration": "1s", "target": 1}]}`, "options.duration and options.stages"},
		{`{"duration": "5s", "scenarios": {"a": {"executor": "x"}}}`, "options.duration and options.scenarios"},
		{`{"stages": [{"duration": "1s", "target": 1}], "scenarios": {"a": {"executor": "x"}}}`, "options.stages and options.scenarios"},
		{`{"duration": 0}`, "options.duration: must be greater than 0"},
	}
	for _, c := range cases {
		o, err := Consolidate(mustParse(t, c.script, "script options"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = o.ResolveScenarios()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.script, err, c.want)
			continue
		}
		if exitcode.Of(err) != exitcode.InvalidConfig {
			t.Errorf("%s: exit code %d", c.script, exitcode.Of(err))
		}
		if _, err := Scenarios(o); exitcode.Of(err) != exitcode.InvalidConfig {
			t.Errorf("%s: Scenarios: %v", c.script, err)
		}
	}
}

func TestFromEnv(t *testing.T) {
	o, err := FromEnv(map[string]string{
		"K6_VUS": "10", "K6_DURATION": "1m", "K6_ITERATIONS": "20", "K6_STAGES": "10s:5, 20s:10",
		"K6_TAGS": "env=staging,team:core", "K6_SYSTEM_TAGS": "status, method", "K6_SUMMARY_TREND_STATS": "avg,p(99.9)",
		"K6_SUMMARY_TIME_UNIT": "ms", "K6_NO_THRESHOLDS": "true", "K6_NO_SETUP": "1", "K6_NO_TEARDOWN": "false",
		"K6_MAX_REDIRECTS": "3", "K6_USER_AGENT": "ua", "K6_INSECURE_SKIP_TLS_VERIFY": "t", "K6_HTTP_DEBUG": "true",
		"K6_NO_CONNECTION_REUSE": "TRUE", "K6_DISCARD_RESPONSE_BODIES": "1", "K6_SETUP_TIMEOUT": "90s",
		"K6_TEARDOWN_TIMEOUT": "2000", "K6_BATCH": "4", "K6_BATCH_PER_HOST": "2", "K6_MIN_ITERATION_DURATION": "1s",
		"K6_THROW": "true", "K6_NO_VU_CONNECTION_REUSE": "1", "K6_NO_COOKIES_RESET": "1", "K6_HANDLE_SUMMARY_TIMEOUT": "5m",
		"K6_OUT": "json=x", "PATH": "/bin", "K6_EXECUTION_SEGMENT": "0:1/2", "K6_SCENARIOS": "{}", "K6_VUS_MAX": "",
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.Source != "environment" || *o.VUs != 10 || o.Duration.Std() != time.Minute || *o.Iterations != 20 {
		t.Errorf("vus/duration/iterations: %+v", o)
	}
	if len(o.Stages) != 2 || *o.Stages[1].Target != 10 || o.Stages[1].Duration.Std() != 20*time.Second {
		t.Errorf("stages %+v", o.Stages)
	}
	if !reflect.DeepEqual(o.Tags, map[string]string{"env": "staging", "team": "core"}) {
		t.Errorf("tags %v", o.Tags)
	}
	if !reflect.DeepEqual(o.SystemTags, []string{"status", "method"}) || !reflect.DeepEqual(o.SummaryTrendStats, []string{"avg", "p(99.9)"}) {
		t.Errorf("lists %v %v", o.SystemTags, o.SummaryTrendStats)
	}
	if *o.SummaryTimeUnit != "ms" || !*o.NoThresholds || !*o.NoSetup || *o.NoTeardown || *o.MaxRedirects != 3 ||
		*o.UserAgent != "ua" || !*o.InsecureSkipTLSVerify || *o.HTTPDebug != "headers" || !*o.NoConnectionReuse ||
		!*o.DiscardResponseBodies || o.SetupTimeout.Std() != 90*time.Second || o.TeardownTimeout.Std() != 2*time.Second ||
		*o.Batch != 4 || *o.BatchPerHost != 2 || o.MinIterationDuration.Std() != time.Second || !*o.Throw ||
		!*o.NoVUConnectionReuse || !*o.NoCookiesReset || o.HandleSummaryTimeout.Std() != 5*time.Minute {
		t.Errorf("scalar options wrong: %+v", o)
	}
	if o.ExecutionSegment != nil || o.Scenarios != nil {
		t.Error("execution segments and scenarios are not read from the environment")
	}
	empty, err := FromEnv(map[string]string{"K6_VUS": "", "K6_DURATION": "  "})
	if err != nil || empty.VUs != nil || empty.Duration != nil {
		t.Errorf("empty variables must count as unset: %+v, %v", empty, err)
	}
}

func TestFromEnvErrors(t *testing.T) {
	cases := []struct{ name, value, want string }{
		{"K6_VUS", "abc", `K6_VUS: "abc" is not a whole number`},
		{"K6_VUS", "-2", `K6_VUS: must not be negative, got -2`},
		{"K6_ITERATIONS", "1.5", `K6_ITERATIONS: "1.5" is not a whole number`},
		{"K6_DURATION", "ten", `K6_DURATION: "ten" is not a duration`},
		{"K6_DURATION", "-1s", `K6_DURATION: must not be negative`},
		{"K6_STAGES", "10s", `K6_STAGES: stage "10s" must be written duration:target`},
		{"K6_STAGES", "x:5", `K6_STAGES: stage "x:5": "x" is not a duration`},
		{"K6_STAGES", "10s:many", `K6_STAGES: stage "10s:many": target "many" is not a whole number`},
		{"K6_STAGES", "10s:-1", `K6_STAGES: stage "10s:-1": the target must be between 0 and`},
		{"K6_TAGS", "novalue", `K6_TAGS: tag "novalue" must be written name=value`},
		{"K6_TAGS", "=v", `K6_TAGS: tag "=v" must be written name=value`},
		{"K6_SYSTEM_TAGS", "status,colour", `K6_SYSTEM_TAGS: unknown system tag "colour"`},
		{"K6_SUMMARY_TREND_STATS", "avg,p95", `K6_SUMMARY_TREND_STATS: unknown trend stat "p95"`},
		{"K6_SUMMARY_TIME_UNIT", "m", `K6_SUMMARY_TIME_UNIT: unknown time unit "m"`},
		{"K6_NO_THRESHOLDS", "maybe", `K6_NO_THRESHOLDS: "maybe" is not true or false`},
		{"K6_HTTP_DEBUG", "body", `K6_HTTP_DEBUG: must be "headers" or "full", got "body"`},
		{"K6_MAX_REDIRECTS", "-1", `K6_MAX_REDIRECTS: must not be negative`},
		{"K6_SETUP_TIMEOUT", "soon", `K6_SETUP_TIMEOUT: "soon" is not a duration`},
		{"K6_BATCH", "0", `K6_BATCH: must be at least 1, got 0`},
	}
	for _, c := range cases {
		_, err := FromEnv(map[string]string{c.name: c.value})
		if err == nil {
			t.Errorf("%s=%s accepted", c.name, c.value)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s=%s:\n got %q\nwant %q", c.name, c.value, err, c.want)
		}
		if exitcode.Of(err) != exitcode.InvalidConfig {
			t.Errorf("%s=%s: exit code %d", c.name, c.value, exitcode.Of(err))
		}
	}
}

func TestSetRejectsStructuredOptions(t *testing.T) {
	o := &Options{}
	for _, name := range []string{"scenarios", "thresholds", "nope"} {
		if err := o.Set(name, "x"); err == nil {
			t.Errorf("Set(%q) accepted", name)
		}
	}
}

func TestEveryOptionHasAField(t *testing.T) {
	// Each spec must point at a distinct field, and every JSON-tagged
	// field of Options must have a spec, so no option is silently dropped.
	seen := map[string]bool{}
	for _, s := range specs {
		o := &Options{}
		field := fmt.Sprintf("%p", s.field(o))
		if seen[field] {
			t.Errorf("%s shares a field with another option", s.name)
		}
		seen[field] = true
	}
	typ := reflect.TypeFor[Options]()
	for i := range typ.NumField() {
		tag := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		if _, ok := specByName[tag]; !ok {
			t.Errorf("field %s (%s) has no option spec", typ.Field(i).Name, tag)
		}
	}
}

// fakeConfig is a scenario config of the test executor types below.
type fakeConfig struct{ base *executor.Scenario }

func (c *fakeConfig) Base() *executor.Scenario            { return c.base }
func (c *fakeConfig) Model() executor.Model               { return executor.ModelClosed }
func (c *fakeConfig) MaxVUs() int                         { return 1 }
func (c *fakeConfig) InitialVUs() int                     { return 1 }
func (c *fakeConfig) MaxDuration() time.Duration          { return time.Second }
func (c *fakeConfig) Description() string                 { return "fake" }
func (c *fakeConfig) New(executor.Deps) executor.Executor { return fakeExecutor{} }
func (c *fakeConfig) Segmented(*segment.Tuple) (executor.Config, error) {
	return nil, executor.ErrNoSegments
}

type fakeExecutor struct{}

func (fakeExecutor) Run(context.Context) error   { return nil }
func (fakeExecutor) Progress() executor.Progress { return executor.Progress{} }

const (
	fakeType    = "config-test-fake"
	failingType = "config-test-failing"
)

func init() {
	executor.Register(executor.Type{Name: fakeType, Parse: func(name string, raw json.RawMessage) (executor.Config, error) {
		var b executor.BaseOptions
		if err := executor.DecodeStrict(name, raw, &b); err != nil {
			return nil, err
		}
		s, err := b.Scenario(name)
		if err != nil {
			return nil, err
		}
		return &fakeConfig{base: s}, nil
	}})
	executor.Register(executor.Type{Name: failingType, Parse: func(name string, raw json.RawMessage) (executor.Config, error) {
		return nil, fmt.Errorf("scenarios.%s.rate: must be greater than 0", name)
	}})
}

func TestScenariosOrderAndParse(t *testing.T) {
	o := mustParse(t, `{"scenarios": {
		"late": {"executor": "config-test-fake", "startTime": "10s"},
		"b": {"executor": "config-test-fake"},
		"a": {"executor": "config-test-fake"},
		"mid": {"executor": "config-test-fake", "startTime": "5s", "exec": "api"}
	}}`, "script options")
	cfgs, err := Scenarios(o)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cfgs {
		names = append(names, c.Base().Name)
	}
	if got := strings.Join(names, ","); got != "a,b,mid,late" {
		t.Errorf("order %s, want a,b,mid,late", got)
	}
	if cfgs[2].Base().Exec != "api" || cfgs[3].Base().StartTime != 10*time.Second {
		t.Errorf("parsed scenarios wrong: %+v %+v", cfgs[2].Base(), cfgs[3].Base())
	}
}

func TestScenariosErrors(t *testing.T) {
	cases := []struct{ scenarios, want string }{
		{`{"x": {"executor": "foo"}}`, `scenarios.x.executor: unknown executor "foo"; available: `},
		{`{"x": {"vus": 1}}`, `scenarios.x.executor: required; available: `},
		{`{"x": {"executor": 5}}`, `scenarios.x.executor: expected a string, got 5`},
		{`{"x": {"executor": "config-test-fake", "rate": 5}}`, `scenarios.x.rate: unknown option`},
		{`{"x": {"executor": "config-test-failing"}}`, `scenarios.x.rate: must be greater than 0`},
		{`{"bad name": {"executor": "config-test-fake"}}`, `scenarios.bad name: a scenario name may only contain`},
	}
	for _, c := range cases {
		o := mustParse(t, `{"scenarios": `+c.scenarios+`}`, "script options")
		_, err := Scenarios(o)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want prefix %q", c.scenarios, err, c.want)
			continue
		}
		if exitcode.Of(err) != exitcode.InvalidConfig {
			t.Errorf("%s: exit code %d", c.scenarios, exitcode.Of(err))
		}
		if strings.Contains(c.want, "available") && !strings.Contains(err.Error(), fakeType) {
			t.Errorf("%s: available list lacks registered executors: %v", c.scenarios, err)
		}
	}
}

func TestScenariosFromShortcutsNameTheirOptions(t *testing.T) {
	// Whatever the real shared-iterations executor says about vus 0, the
	// message must point the user at the options that made the scenario.
	if _, ok := executor.Lookup("shared-iterations"); !ok {
		t.Skip("shared-iterations executor not registered")
	}
	o, err := Consolidate(flagTier(t, "vus", "5", "iterations", "2"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Scenarios(o)
	if err == nil {
		t.Skip("shared-iterations accepts fewer iterations than VUs")
	}
	if !strings.Contains(err.Error(), `the "default" scenario is made from the vus and iterations options`) ||
		exitcode.Of(err) != exitcode.InvalidConfig {
		t.Errorf("error %v (code %d)", err, exitcode.Of(err))
	}
	var ee *exitcode.Error
	if !errors.As(err, &ee) {
		t.Error("no exitcode.Error in the chain")
	}
}

// Options built without Consolidate (so without Validate) still cannot
// make a ramp out of a stage with no target.
func TestResolveStageWithoutTarget(t *testing.T) {
	one := int64(1)
	o := &Options{Stages: []Stage{{Duration: duration.Duration(time.Second), Target: &one}, {Duration: duration.Duration(time.Second)}}}
	_, err := o.ResolveScenarios()
	if err == nil || err.Error() != "options.stages[1].target: required" || exitcode.Of(err) != exitcode.InvalidConfig {
		t.Errorf("got %v (exit code %d)", err, exitcode.Of(err))
	}
}
