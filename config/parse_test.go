package config

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/exitcode"
)

func TestParseFull(t *testing.T) {
	raw := `{
		"vus": 10,
		"duration": "1m30s",
		"iterations": "25",
		"stages": [{"duration": "10s", "target": 5}, {"duration": 2000, "target": 0}],
		"scenarios": {"api": {"executor": "constant-vus", "vus": 2, "duration": "5s"}},
		"thresholds": {
			"http_req_duration": ["p(95)<200", {"threshold": "max<1000", "abortOnFail": true, "delayAbortEval": "10s"}],
			"checks{name:login}": []
		},
		"setupTimeout": "2m", "teardownTimeout": 1500, "handleSummaryTimeout": "1d",
		"noSetup": true, "noTeardown": false,
		"summaryTrendStats": ["avg", "p(99.9)", "count"], "summaryTimeUnit": "ms", "noThresholds": false,
		"tags": {"env": "staging"}, "systemTags": ["status", "vu"],
		"maxRedirects": 3, "userAgent": "ua/1", "insecureSkipTLSVerify": true, "discardResponseBodies": true,
		"batch": 5, "batchPerHost": 0, "rps": 100, "noConnectionReuse": true, "noVUConnectionReuse": true,
		"noCookiesReset": true, "minIterationDuration": "1s", "throw": true, "httpDebug": "full",
		"executionSegment": "0:1/2", "executionSegmentSequence": "0,1/2,1",
		"ext": {"loadimpact": {"name": "x"}}, "hosts": {"a": "127.0.0.1"}
	}`
	o, err := Parse([]byte(raw), "script options")
	if err != nil {
		t.Fatal(err)
	}
	if o.Source != "script options" {
		t.Errorf("Source = %q", o.Source)
	}
	if *o.VUs != 10 || o.Duration.Std() != 90*time.Second || *o.Iterations != 25 {
		t.Errorf("vus/duration/iterations = %d/%s/%d", *o.VUs, o.Duration, *o.Iterations)
	}
	if len(o.Stages) != 2 || o.Stages[0].Duration.Std() != 10*time.Second || *o.Stages[0].Target != 5 ||
		o.Stages[1].Duration.Std() != 2*time.Second || *o.Stages[1].Target != 0 {
		t.Errorf("stages = %+v", o.Stages)
	}
	var api map[string]any
	if err := json.Unmarshal(o.Scenarios["api"], &api); err != nil || api["executor"] != "constant-vus" {
		t.Errorf("scenarios.api = %s (%v)", o.Scenarios["api"], err)
	}
	th := o.Thresholds["http_req_duration"]
	if len(th) != 2 || th[0].Source != "p(95)<200" || th[0].AbortOnFail || th[0].DelayAbortEval != nil ||
		th[1].Source != "max<1000" || !th[1].AbortOnFail || th[1].DelayAbortEval.Std() != 10*time.Second {
		t.Errorf("thresholds = %+v", th)
	}
	if l, ok := o.Thresholds["checks{name:login}"]; !ok || len(l) != 0 {
		t.Errorf("empty threshold list lost: %v", o.Thresholds)
	}
	if o.SetupTimeout.Std() != 2*time.Minute || o.TeardownTimeout.Std() != 1500*time.Millisecond ||
		o.HandleSummaryTimeout.Std() != 24*time.Hour {
		t.Errorf("timeouts = %s %s %s", o.SetupTimeout, o.TeardownTimeout, o.HandleSummaryTimeout)
	}
	if !*o.NoSetup || *o.NoTeardown || *o.NoThresholds {
		t.Error("noSetup/noTeardown/noThresholds wrong")
	}
	if strings.Join(o.SummaryTrendStats, ",") != "avg,p(99.9),count" || *o.SummaryTimeUnit != "ms" {
		t.Errorf("summary = %v %s", o.SummaryTrendStats, *o.SummaryTimeUnit)
	}
	if o.Tags["env"] != "staging" || strings.Join(o.SystemTags, ",") != "status,vu" {
		t.Errorf("tags = %v %v", o.Tags, o.SystemTags)
	}
	if *o.MaxRedirects != 3 || *o.UserAgent != "ua/1" || !*o.InsecureSkipTLSVerify || !*o.DiscardResponseBodies ||
		*o.Batch != 5 || *o.BatchPerHost != 0 || *o.RPS != 100 || !*o.NoConnectionReuse || !*o.NoVUConnectionReuse ||
		!*o.NoCookiesReset || o.MinIterationDuration.Std() != time.Second || !*o.Throw || *o.HTTPDebug != "full" {
		t.Errorf("http options wrong: %+v", o)
	}
	if *o.ExecutionSegment != "0:1/2" || *o.ExecutionSegmentSequence != "0,1/2,1" {
		t.Error("segments wrong")
	}
}

func TestParseEmptyAndNull(t *testing.T) {
	for _, raw := range []string{"", "  ", "null", "{}", `{"vus": null, "tags": null, "stages": null, "iterations": ""}`} {
		o, err := Parse([]byte(raw), "x")
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		if o.VUs != nil || o.Tags != nil || o.Stages != nil || o.Iterations != nil {
			t.Errorf("%q: something got set: %+v", raw, o)
		}
	}
}

func TestParseKeepsExplicitlyEmpty(t *testing.T) {
	o, err := Parse([]byte(`{"stages": [], "scenarios": {}, "systemTags": []}`), "x")
	if err != nil {
		t.Fatal(err)
	}
	if o.Stages == nil || o.Scenarios == nil || o.SystemTags == nil {
		t.Errorf("empty values must stay set (non-nil): %+v", o)
	}
}

func TestParseIntegralForms(t *testing.T) {
	for raw, want := range map[string]int64{`10`: 10, `10.0`: 10, `1e3`: 1000, `"7"`: 7, `" 8 "`: 8, `-0`: 0} {
		o, err := Parse([]byte(`{"maxRedirects": `+raw+`}`), "x")
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		if *o.MaxRedirects != want {
			t.Errorf("%s: got %d, want %d", raw, *o.MaxRedirects, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ raw, want string }{
		{`{"vus": "ten"}`, `options.vus: expected a whole number, got "ten" (in script options)`},
		{`{"vus": true}`, `options.vus: expected a whole number, got true`},
		{`{"vus": 1.5}`, `options.vus: expected a whole number, got 1.5`},
		{`{"vus": -1}`, `options.vus: must not be negative, got -1`},
		{`{"vus": 1e30}`, `options.vus: expected a whole number, got 1e30`},
		{`{"iterations": 0}`, `options.iterations: must be at least 1, got 0`},
		{`{"duration": "abc"}`, `options.duration: invalid duration "abc"`},
		{`{"duration": true}`, `options.duration: expected a duration such as "30s"`},
		{`{"duration": "-5s"}`, `options.duration: must not be negative, got -5s`},
		{`{"stages": {"duration": "1s"}}`, `options.stages: expected an array of {duration, target}, got an object`},
		{`{"stages": [{"target": 1}]}`, `options.stages[0].duration: required`},
		{`{"stages": [{"duration": "1s", "target": 2}, {"duration": "1s"}]}`, `options.stages[1].target: required`},
		{`{"stages": [{"duration": "1s", "target": "x"}]}`, `options.stages[0].target: expected a whole number, got "x"`},
		{`{"stages": [{"duration": "1s", "target": -3}]}`, `options.stages[0].target: must be between 0 and 100000000, got -3`},
		{`{"stages": [{"duration": "1s", "target": 1, "tagret": 2}]}`, `options.stages[0].tagret: unknown option; use duration, target`},
		{`{"stages": [5]}`, `options.stages[0]: expected an object, got 5`},
		{`{"thresholds": []}`, `options.thresholds: expected an object`},
		{`{"thresholds": {"http_reqs": "count>1"}}`, `options.thresholds.http_reqs: expected an array of thresholds, got "count>1"`},
		{`{"thresholds": {"http_reqs": [1]}}`, `options.thresholds.http_reqs[0]: expected a threshold string or an object`},
		{`{"thresholds": {"http_reqs": [{"abortOnFail": true}]}}`, `options.thresholds.http_reqs[0].threshold: required`},
		{`{"thresholds": {"http_reqs": [{"threshold": "count>1", "abortOnFail": "yes"}]}}`, `options.thresholds.http_reqs[0].abortOnFail: expected true or false, got "yes"`},
		{`{"thresholds": {"http_reqs": [{"threshold": "count>1", "delayAbortEval": "soon"}]}}`, `options.thresholds.http_reqs[0].delayAbortEval: invalid duration "soon"`},
		{`{"thresholds": {"http_reqs": [{"threshold": "count>1", "abort": true}]}}`, `options.thresholds.http_reqs[0].abort: unknown option; use threshold, abortOnFail, delayAbortEval, window`},
		{`{"thresholds": {"http_reqs": [{"threshold": "count>1", "window": "a minute"}]}}`, `options.thresholds.http_reqs[0].window: invalid duration "a minute"`},
		{`{"thresholds": {"http_reqs": [{"threshold": "count>1", "window": "0s"}]}}`, `options.thresholds.http_reqs[0].window: a window of 0s is no window`},
		{`{"thresholds": {"http_reqs": [{"threshold": "count>1", "window": 0}]}}`, `options.thresholds.http_reqs[0].window: a window of 0s is no window`},
		{`{"thresholds": {"http_reqs": [" "]}}`, `options.thresholds.http_reqs[0]: empty threshold expression`},
		{`{"scenarios": []}`, `options.scenarios: expected an object, got an array`},
		{`{"scenarios": {"a": "constant-vus"}}`, `options.scenarios.a: expected an object, got "constant-vus"`},
		{`{"noSetup": "yes"}`, `options.noSetup: expected true or false, got "yes"`},
		{`{"userAgent": 5}`, `options.userAgent: expected a string, got 5`},
		{`{"tags": {"env": 1}}`, `options.tags.env: expected a string, got 1`},
		{`{"tags": ["a"]}`, `options.tags: expected an object of strings, got an array`},
		{`{"tags": {"": "x"}}`, `options.tags: a tag name must not be empty`},
		{`{"systemTags": "status"}`, `options.systemTags: expected an array of strings, got "status"`},
		{`{"systemTags": ["status", "colour"]}`, `options.systemTags[1]: unknown system tag "colour"`},
		{`{"summaryTrendStats": ["avg", 5]}`, `options.summaryTrendStats[1]: expected a string, got 5`},
		{`{"summaryTrendStats": ["p99"]}`, `options.summaryTrendStats[0]: unknown trend stat "p99"`},
		{`{"summaryTrendStats": ["p(101)"]}`, `options.summaryTrendStats[0]: unknown trend stat "p(101)"`},
		{`{"summaryTimeUnit": "h"}`, `options.summaryTimeUnit: unknown time unit "h"; use s, ms or us`},
		{`{"httpDebug": "body"}`, `options.httpDebug: must be "headers" or "full", got "body"`},
		{`{"batch": 0}`, `options.batch: must be at least 1, got 0`},
		{`{"maxRedirects": -1}`, `options.maxRedirects: must not be negative, got -1`},
		{`[1, 2]`, `options: expected an object, got an array`},
		{`{"vus": 1,}`, `invalid JSON at line 1, column`},
		{"{\n\"vus\": }", `invalid JSON at line 2, column`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.raw), "script options")
		if err == nil {
			t.Errorf("%s: no error, want %q", c.raw, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.raw, err, c.want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", c.raw, err)
		}
		if code := exitcode.Of(err); code != exitcode.InvalidConfig {
			t.Errorf("%s: exit code %d, want 104", c.raw, code)
		}
		if !strings.HasSuffix(err.Error(), "(in script options)") {
			t.Errorf("%s: error does not name the source: %q", c.raw, err)
		}
	}
}

func TestThresholdJSONRoundTrip(t *testing.T) {
	d := Options{}
	o, err := Parse([]byte(`{"thresholds": {"m": ["avg<1", {"threshold": "max<2", "abortOnFail": true}, {"threshold": "min<3"}, {"threshold": "p(99)<4", "window": "1m"}]}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o.Thresholds); err != nil {
		t.Fatal(err)
	}
	// The object form survives only where it carries something.
	if got, want := strings.TrimSpace(b.String()), `{"m":["avg<1",{"threshold":"max<2","abortOnFail":true},"min<3",{"threshold":"p(99)<4","window":"1m0s"}]}`; got != want {
		t.Errorf("marshalled %s, want %s", got, want)
	}
	if err := json.Unmarshal([]byte(`{"thresholds": {"m": ["avg<1", {"threshold": "max<2", "abortOnFail": true}]}}`), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Thresholds["m"]) != 2 || !d.Thresholds["m"][1].AbortOnFail || d.Thresholds["m"][0].Source != "avg<1" {
		t.Errorf("json.Unmarshal of both forms: %+v", d.Thresholds)
	}
}

func TestValidTrendStat(t *testing.T) {
	good := []string{"avg", "min", "med", "max", "count", "p(0)", "p(90)", "p(99.9)", "p(100)", "p(99.99)"}
	bad := []string{"", "sum", "p90", "p()", "p(-1)", "p(100.1)", "p(1e2)", "p(90", "P(90)", "p(ninety)", "p( 90)", "p(NaN)", "p(Inf)"}
	for _, s := range good {
		if !ValidTrendStat(s) {
			t.Errorf("%q rejected", s)
		}
	}
	for _, s := range bad {
		if ValidTrendStat(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

func FuzzParseOptions(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `{"vus": 1, "duration": "10s"}`, `{"stages": [{"duration": "1s", "target": 1}]}`,
		`{"thresholds": {"a": ["p(95)<1", {"threshold": "x", "abortOnFail": true, "delayAbortEval": 5}]}}`,
		`{"scenarios": {"a": {"executor": "x"}}, "tags": {"a": "b"}}`, `{"vus": "1e400"}`, `[`, `{"duration": 1e308}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		o, err := Parse(raw, "fuzz")
		if err != nil {
			if exitcode.Of(err) != exitcode.InvalidConfig {
				t.Fatalf("error without exit code 104: %v", err)
			}
			return
		}
		// Whatever parsed must consolidate or fail cleanly, and resolve
		// to scenarios or fail cleanly.
		c, err := Consolidate(o)
		if err != nil {
			return
		}
		_, _ = c.ResolveScenarios()
	})
}

// The network fence options (issue 23: they used to be ignored with a
// warning) are read from the script, K6_* variables and flags, and a
// value that cannot be honoured stops the test before it starts, naming
// the option.
func TestNetworkFenceOptions(t *testing.T) {
	o, err := Parse([]byte(`{"blacklistIPs": ["127.0.0.0/8", "::1/128"], "blockHostnames": ["*.test", "localhost"],
		"hosts": {"a.test": "127.0.0.1:8080", "*.b.test": "::1"}}`), "script options")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Warnings) != 0 || strings.Join(o.BlacklistIPs, ",") != "127.0.0.0/8,::1/128" ||
		strings.Join(o.BlockHostnames, ",") != "*.test,localhost" || o.Hosts["a.test"] != "127.0.0.1:8080" || o.Hosts["*.b.test"] != "::1" {
		t.Errorf("parsed %+v, warnings %q", o, o.Warnings)
	}
	for _, c := range []struct{ json, want string }{
		{`{"blacklistIPs": ["10.0.0.0/8", "bogus"]}`, `options.blacklistIPs[1]: "bogus" is not an address range in CIDR notation, such as 10.0.0.0/8 or fd00::/8`},
		{`{"blockHostnames": ["a..b"]}`, `options.blockHostnames[0]: "a..b" is not a host name pattern`},
		{`{"hosts": {"a b": "127.0.0.1"}}`, `options.hosts: "a b" is not a host name pattern with an optional :port`},
		{`{"hosts": {"a.test": "localhost:18201"}}`, `options.hosts: a.test: "localhost:18201" is not an IP address or IP:port; hosts cannot send a name to another name`},
	} {
		_, err := Parse([]byte(c.json), "script options")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.json, err, c.want)
		}
	}
	env, err := FromEnv(map[string]string{"K6_BLACKLIST_IPS": "127.0.0.0/8, 10.0.0.0/8", "K6_BLOCK_HOSTNAMES": "*.test,localhost"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(env.BlacklistIPs, "|") != "127.0.0.0/8|10.0.0.0/8" || strings.Join(env.BlockHostnames, "|") != "*.test|localhost" {
		t.Errorf("from the environment: %q %q", env.BlacklistIPs, env.BlockHostnames)
	}
	if _, err := FromEnv(map[string]string{"K6_BLACKLIST_IPS": "bogus"}); err == nil || !strings.Contains(err.Error(), "K6_BLACKLIST_IPS") {
		t.Errorf("a bad K6_BLACKLIST_IPS: %v", err)
	}
}
