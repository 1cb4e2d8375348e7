package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/metrics"
)

// fakeScript stands in for a JavaScript script: it exports the given
// options and functions.
type fakeScript struct {
	options json.RawMessage
	exports []string
}

func (s *fakeScript) Options() json.RawMessage { return s.options }
func (s *fakeScript) Capabilities() executor.Capabilities {
	fns := slices.Sorted(slices.Values(s.exports))
	return executor.Capabilities{Functions: fns}
}
func (s *fakeScript) Configure(*config.Options, *metrics.Registry, *metrics.Builtin, *metrics.Inlet) error {
	return nil
}
func (s *fakeScript) NewVU(context.Context, uint64, metrics.Recorder) (executor.VU, error) {
	return nil, errors.New("fake script has no VUs")
}
func (s *fakeScript) Setup(context.Context, metrics.Recorder) (json.RawMessage, error) {
	return nil, nil
}
func (s *fakeScript) Teardown(context.Context, metrics.Recorder, json.RawMessage) error { return nil }
func (s *fakeScript) HandleSummary(context.Context, map[string]any) (map[string][]byte, bool, error) {
	return nil, false, nil
}

// harness replaces the script loader and the engine for one test.
type harness struct {
	script  *fakeScript
	loadErr error
	// engine, when set, runs instead of recording and returning nil.
	engine func(ctx context.Context, cfg engine.Config) error

	loadedPath string
	loaded     loadOptions
	ran        *engine.Config
}

func newHarness(t *testing.T, options string) *harness {
	t.Helper()
	h := &harness{script: &fakeScript{options: json.RawMessage(options), exports: []string{"default"}}}
	oldLoad, oldRun := loadScript, runEngine
	t.Cleanup(func() { loadScript, runEngine = oldLoad, oldRun })
	loadScript = func(path string, o loadOptions) (Script, error) {
		h.loadedPath, h.loaded = path, o
		if h.loadErr != nil {
			return nil, h.loadErr
		}
		return h.script, nil
	}
	runEngine = func(ctx context.Context, cfg engine.Config) error {
		h.ran = &cfg
		if h.engine != nil {
			return h.engine(ctx, cfg)
		}
		return nil
	}
	return h
}

func (h *harness) run(env map[string]string, args ...string) (code int, stdout, stderr string) {
	var out, errw bytes.Buffer
	if env == nil {
		env = map[string]string{}
	}
	code = execute(args, &out, &errw, env)
	return code, out.String(), errw.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersion(t *testing.T) {
	h := newHarness(t, "")
	code, out, errs := h.run(nil, "version")
	if code != 0 || errs != "" {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
	if !strings.HasPrefix(out, "metronome v"+config.Version+" (go") || !strings.Contains(out, "/") || strings.Count(out, "\n") != 1 {
		t.Errorf("version output %q", out)
	}
	code, out2, _ := h.run(nil, "--version")
	if code != 0 || out2 != out {
		t.Errorf("--version printed %q (code %d), want %q", out2, code, out)
	}
}

func TestRootHasRegisteredCommands(t *testing.T) {
	root := NewRoot(&bytes.Buffer{}, &bytes.Buffer{})
	for _, name := range []string{"run", "version"} {
		if c, _, err := root.Find([]string{name}); err != nil || c.Name() != name {
			t.Errorf("command %q not found: %v", name, err)
		}
	}
}

func TestRunPassesEverythingToTheEngine(t *testing.T) {
	h := newHarness(t, `{"vus": 3, "duration": "20s", "tags": {"from": "script"}}`)
	env := map[string]string{"HOME": "/home/x", "K6_SUMMARY_EXPORT": "env.json", "K6_OUT": "csv=a.csv,json=b.json"}
	code, _, errs := h.run(env, "run", "-q", "--no-color", "-o", "json=x.json", "-o", "csv=y.csv",
		"-e", "A=1,2", "-e", "B=", "--summary-mode", "full", "--tag", "t=a,b", "--http-debug", "script.js")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	if h.loadedPath != "script.js" || h.loaded.Stderr == nil {
		t.Errorf("loaded %q with %+v", h.loadedPath, h.loaded)
	}
	if h.loaded.Env["A"] != "1,2" || h.loaded.Env["B"] != "" || h.loaded.Env["HOME"] != "/home/x" {
		t.Errorf("__ENV = %v", h.loaded.Env)
	}
	c := h.ran
	if c == nil {
		t.Fatal("engine not run")
	}
	if c.Script != h.script || c.ScriptPath != "script.js" || !c.Quiet || !c.NoColor || c.SummaryMode != "full" ||
		c.SummaryExport != "env.json" || !reflect.DeepEqual(c.Outputs, []string{"json=x.json", "csv=y.csv"}) {
		t.Errorf("engine config %+v", c)
	}
	if c.Env["A"] != "1,2" || c.Env["HOME"] != "/home/x" {
		t.Errorf("engine env %v", c.Env)
	}
	if *c.Options.VUs != 3 || c.Options.Duration.Std() != 20*time.Second || *c.Options.HTTPDebug != "headers" ||
		!reflect.DeepEqual(c.Options.Tags, map[string]string{"t": "a,b"}) {
		t.Errorf("options %+v", c.Options)
	}
	if c.Stdout == nil || c.Stderr == nil || c.StdoutTTY || c.StderrTTY {
		t.Error("stdout/stderr not passed, or buffers taken for terminals")
	}
}

// TestConfigFileCollectors checks that the config file's "collectors"
// object reaches the run, each output's settings as written, for the
// output extensions that read them as k6's JSONConfig.
func TestConfigFileCollectors(t *testing.T) {
	cfgFile := writeFile(t, "config.json", `{"collectors": {"xk6-influxdb": {"bucket": "b", "pushInterval": "2s"}, "other": null}}`)
	h := newHarness(t, "")
	if code, _, stderr := h.run(nil, "run", "-c", cfgFile, "script.js"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if h.ran == nil {
		t.Fatal("the engine did not run")
	}
	if got := string(h.ran.Collectors["xk6-influxdb"]); got != `{"bucket": "b", "pushInterval": "2s"}` {
		t.Errorf("collectors.xk6-influxdb reached the run as %q", got)
	}
	if len(h.ran.Collectors) != 2 {
		t.Errorf("collectors %v, want both outputs' entries", h.ran.Collectors)
	}
	h = newHarness(t, "")
	if code, _, stderr := h.run(nil, "run", "script.js"); code != 0 || h.ran == nil || h.ran.Collectors != nil {
		t.Errorf("without a config file: exit %d, collectors %v; want none (%s)", code, h.ran, stderr)
	}
}

func TestRunSettingsPrecedence(t *testing.T) {
	cfgFile := writeFile(t, "config.json", `{"out": ["json=file.json"], "userAgent": "file"}`)
	cases := []struct {
		name      string
		env       map[string]string
		args      []string
		outputs   []string
		mode      string
		quiet     bool
		noColor   bool
		sysEnv    bool
		userAgent string
		blacklist []string
		blocked   []string
	}{
		{name: "defaults", mode: "compact", sysEnv: true, userAgent: config.DefaultUserAgent()},
		{name: "config file", args: []string{"-c", cfgFile}, outputs: []string{"json=file.json"}, mode: "compact", sysEnv: true, userAgent: "file"},
		{name: "K6_CONFIG", env: map[string]string{"K6_CONFIG": cfgFile}, outputs: []string{"json=file.json"}, mode: "compact", sysEnv: true, userAgent: "file"},
		{name: "env over file", env: map[string]string{"K6_CONFIG": cfgFile, "K6_OUT": "csv=env.csv", "K6_SUMMARY_MODE": "disabled",
			"K6_QUIET": "true", "K6_NO_COLOR": "1", "K6_INCLUDE_SYSTEM_ENV_VARS": "false", "K6_USER_AGENT": "env"},
			outputs: []string{"csv=env.csv"}, mode: "disabled", quiet: true, noColor: true, userAgent: "env"},
		{name: "flags over env", env: map[string]string{"K6_CONFIG": cfgFile, "K6_OUT": "csv=env.csv", "K6_SUMMARY_MODE": "disabled",
			"K6_INCLUDE_SYSTEM_ENV_VARS": "false", "K6_USER_AGENT": "env"},
			args:    []string{"-o", "json=flag.json", "--summary-mode", "full", "--include-system-env-vars", "--user-agent", "flag"},
			outputs: []string{"json=flag.json"}, mode: "full", sysEnv: true, userAgent: "flag"},
		{name: "NO_COLOR", env: map[string]string{"NO_COLOR": "x"}, mode: "compact", noColor: true, sysEnv: true, userAgent: config.DefaultUserAgent()},
		{name: "--no-summary", args: []string{"--no-summary"}, mode: "disabled", sysEnv: true, userAgent: config.DefaultUserAgent()},
		{name: "--no-summary beats --summary-mode", args: []string{"--summary-mode", "full", "--no-summary"}, mode: "disabled", sysEnv: true, userAgent: config.DefaultUserAgent()},
		{name: "no system env", env: map[string]string{"SECRET": "s"}, args: []string{"--include-system-env-vars=false", "-e", "X=1"},
			mode: "compact", userAgent: config.DefaultUserAgent()},
		{name: "fence flags over env", env: map[string]string{"K6_BLACKLIST_IPS": "192.168.0.0/16", "K6_BLOCK_HOSTNAMES": "env.test"},
			args: []string{"--blacklist-ip", "10.0.0.0/8,127.0.0.0/8", "--blacklist-ip", "::1/128", "--block-hostnames", "*.test"},
			mode: "compact", sysEnv: true, userAgent: config.DefaultUserAgent(),
			blacklist: []string{"10.0.0.0/8", "127.0.0.0/8", "::1/128"}, blocked: []string{"*.test"}},
		{name: "fence from env", env: map[string]string{"K6_BLACKLIST_IPS": "192.168.0.0/16", "K6_BLOCK_HOSTNAMES": "env.test"},
			mode: "compact", sysEnv: true, userAgent: config.DefaultUserAgent(),
			blacklist: []string{"192.168.0.0/16"}, blocked: []string{"env.test"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, "")
			env := map[string]string{"PATH": "/bin"}
			for k, v := range c.env {
				env[k] = v
			}
			code, _, errs := h.run(env, append(append([]string{"run"}, c.args...), "s.js")...)
			if code != 0 {
				t.Fatalf("code %d: %s", code, errs)
			}
			got := h.ran
			if !reflect.DeepEqual(got.Outputs, c.outputs) || got.SummaryMode != c.mode || got.Quiet != c.quiet || got.NoColor != c.noColor {
				t.Errorf("outputs %v mode %s quiet %v noColor %v", got.Outputs, got.SummaryMode, got.Quiet, got.NoColor)
			}
			if _, ok := h.loaded.Env["PATH"]; ok != c.sysEnv {
				t.Errorf("system env in __ENV: %v, want %v", ok, c.sysEnv)
			}
			if *got.Options.UserAgent != c.userAgent {
				t.Errorf("userAgent %q, want %q", *got.Options.UserAgent, c.userAgent)
			}
			if !reflect.DeepEqual(got.Options.BlacklistIPs, c.blacklist) || !reflect.DeepEqual(got.Options.BlockHostnames, c.blocked) {
				t.Errorf("blacklistIPs %q blockHostnames %q, want %q %q", got.Options.BlacklistIPs, got.Options.BlockHostnames, c.blacklist, c.blocked)
			}
			if got.Env["PATH"] != "/bin" {
				t.Error("the engine's environment must always hold the process environment")
			}
		})
	}
}

func TestRunPrecedenceOfOptions(t *testing.T) {
	// Each tier sets vus to its own number; the highest tier present wins.
	file := writeFile(t, "c.json", `{"vus": 1, "maxRedirects": 1}`)
	cases := []struct {
		name   string
		script string
		env    map[string]string
		args   []string
		want   int64
	}{
		{name: "file", want: 1},
		{name: "script over file", script: `{"vus": 2}`, want: 2},
		{name: "env over script", script: `{"vus": 2}`, env: map[string]string{"K6_VUS": "3"}, want: 3},
		{name: "flag over env", script: `{"vus": 2}`, env: map[string]string{"K6_VUS": "3"}, args: []string{"-u", "4"}, want: 4},
		{name: "flag over file", args: []string{"--vus", "4"}, want: 4},
		{name: "env over file", env: map[string]string{"K6_VUS": "3"}, want: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.script)
			env := map[string]string{"K6_CONFIG": file}
			for k, v := range c.env {
				env[k] = v
			}
			code, _, errs := h.run(env, append(append([]string{"run"}, c.args...), "s.js")...)
			if code != 0 {
				t.Fatalf("code %d: %s", code, errs)
			}
			if got := *h.ran.Options.VUs; got != c.want {
				t.Errorf("vus %d, want %d", got, c.want)
			}
			if *h.ran.Options.MaxRedirects != 1 {
				t.Errorf("maxRedirects from the file lost: %d", *h.ran.Options.MaxRedirects)
			}
		})
	}
}

func TestRunShortcuts(t *testing.T) {
	cases := []struct {
		args []string
		want map[string]any
	}{
		{[]string{"-u", "10", "-d", "30s"}, map[string]any{"executor": "constant-vus", "vus": 10.0, "duration": "30s"}},
		{[]string{"-u", "10", "-i", "100"}, map[string]any{"executor": "shared-iterations", "vus": 10.0, "iterations": 100.0}},
		{[]string{"-i", "100", "-d", "1m"}, map[string]any{"executor": "shared-iterations", "iterations": 100.0, "maxDuration": "1m0s"}},
		{[]string{"-u", "10"}, map[string]any{"executor": "shared-iterations", "vus": 10.0, "iterations": 10.0}},
		{[]string{"--stage", "10s:5"}, map[string]any{"executor": "ramping-vus", "startVUs": 1.0,
			"stages": []any{map[string]any{"duration": "10s", "target": 5.0}}}},
		{[]string{"-s", "10s:5,20s:0", "-s", "5s:1"}, map[string]any{"executor": "ramping-vus", "startVUs": 1.0,
			"stages": []any{map[string]any{"duration": "10s", "target": 5.0}, map[string]any{"duration": "20s", "target": 0.0},
				map[string]any{"duration": "5s", "target": 1.0}}}},
		{nil, map[string]any{"executor": "per-vu-iterations", "vus": 1.0, "iterations": 1.0}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			h := newHarness(t, "")
			code, _, errs := h.run(nil, append(append([]string{"run"}, c.args...), "s.js")...)
			if code != 0 {
				t.Fatalf("code %d: %s", code, errs)
			}
			sc, err := h.ran.Options.ResolveScenarios()
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(sc["default"], &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("default scenario\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestRunWarnsWhenFlagsOverrideScenarios(t *testing.T) {
	h := newHarness(t, `{"scenarios": {"s": {"executor": "constant-vus", "vus": 1, "duration": "10s"}}}`)
	code, _, errs := h.run(nil, "run", "-u", "2", "s.js")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	if !strings.Contains(errs, `level=warning msg="the scenarios from script options are replaced by vus set in command-line flags"`) {
		t.Errorf("stderr %q", errs)
	}
}

// Under HTTP_PROXY or HTTPS_PROXY a test that sets hosts or blacklistIPs
// runs, as in k6, with one warning naming the options the proxy makes
// moot; blockHostnames alone, which is checked before the proxy is asked,
// gets none.
func TestRunWarnsOfOptionsAProxyMakesMoot(t *testing.T) {
	for _, c := range []struct {
		script string
		env    map[string]string
		want   string
	}{
		{`{"hosts": {"a.test": "127.0.0.1"}, "blacklistIPs": ["10.0.0.0/8"], "blockHostnames": ["b.test"]}`,
			map[string]string{"HTTPS_PROXY": "http://127.0.0.1:3128", "http_proxy": "http://127.0.0.1:3128"},
			"options.hosts, options.blacklistIPs: http_proxy and HTTPS_PROXY name a proxy, which resolves and connects to the hosts of the HTTP and WebSocket requests it carries: hosts does not apply to them"},
		{`{"hosts": {"a.test": "127.0.0.1"}}`, map[string]string{"HTTP_PROXY": "http://127.0.0.1:3128"}, "options.hosts: HTTP_PROXY names a proxy"},
		{`{"blockHostnames": ["b.test"]}`, map[string]string{"HTTP_PROXY": "http://127.0.0.1:3128"}, ""},
		{`{"hosts": {"a.test": "127.0.0.1"}}`, nil, ""},
	} {
		h := newHarness(t, c.script)
		code, _, errs := h.run(c.env, "run", "s.js")
		if code != 0 || h.ran == nil {
			t.Errorf("%s under %v: exit code %d, ran %v: %s", c.script, c.env, code, h.ran != nil, errs)
			continue
		}
		if n := strings.Count(errs, "a proxy, which resolves"); c.want == "" && n != 0 || c.want != "" && (n != 1 || !strings.Contains(errs, c.want)) {
			t.Errorf("%s under %v: stderr %q\nwant one warning %q", c.script, c.env, errs, c.want)
		}
	}
}

func TestBadInputs(t *testing.T) {
	scenario := `{"executor": "constant-vus", "vus": 1, "duration": "10s"}`
	badConfig := writeFile(t, "bad.json", `{"vus": "x"}`)
	brokenConfig := writeFile(t, "broken.json", "{\n  \"vus\": 1,\n}")
	outConfig := writeFile(t, "out.json", `{"out": 5}`)
	collectorsConfig := writeFile(t, "collectors.json", `{"collectors": ["influxdb"]}`)
	tagConfig := writeFile(t, "tags.json", `{"tags": {"a": 1}}`)
	cases := []struct {
		name   string
		script string
		env    map[string]string
		args   []string
		want   string
	}{
		// Flags.
		{name: "vus not a number", args: []string{"-u", "abc"}, want: `invalid argument "abc" for "-u, --vus" flag: "abc" is not a whole number`},
		{name: "negative vus", args: []string{"--vus=-1"}, want: `for "-u, --vus" flag: must not be negative, got -1`},
		{name: "bad duration", args: []string{"-d", "10x"}, want: `"-d, --duration" flag: "10x" is not a duration`},
		{name: "negative duration", args: []string{"--duration=-5s"}, want: `for "-d, --duration" flag: must not be negative, got -5s`},
		{name: "zero duration", args: []string{"-d", "0"}, want: `options.duration: must be greater than 0`},
		{name: "zero iterations", args: []string{"-i", "0"}, want: `"-i, --iterations" flag: must be at least 1, got 0`},
		{name: "fractional iterations", args: []string{"-i", "1.5"}, want: `"1.5" is not a whole number`},
		{name: "stage without target", args: []string{"-s", "10s"}, want: `"-s, --stage" flag: stage "10s" must be written duration:target`},
		{name: "stage bad duration", args: []string{"--stage", "x:5"}, want: `stage "x:5": "x" is not a duration`},
		{name: "stage negative target", args: []string{"--stage", "10s:-1"}, want: `stage "10s:-1": the target must be between 0 and 100000000`},
		{name: "stage list with junk", args: []string{"-s", "10s:5,abc"}, want: `stage "abc" must be written duration:target`},
		{name: "tag without value", args: []string{"--tag", "novalue"}, want: `"--tag" flag: tag "novalue" must be written name=value`},
		{name: "unknown system tag", args: []string{"--system-tags", "status,colour"}, want: `"--system-tags" flag: unknown system tag "colour"`},
		{name: "bad trend stat", args: []string{"--summary-trend-stats", "avg,p95"}, want: `"--summary-trend-stats" flag: unknown trend stat "p95"`},
		{name: "bad percentile", args: []string{"--summary-trend-stats", "p(120)"}, want: `unknown trend stat "p(120)"`},
		{name: "bad time unit", args: []string{"--summary-time-unit", "h"}, want: `"--summary-time-unit" flag: unknown time unit "h"`},
		{name: "bad summary mode", args: []string{"--summary-mode", "verbose"}, want: `--summary-mode: unknown summary mode "verbose"`},
		{name: "bad http debug", args: []string{"--http-debug=body"}, want: `"--http-debug" flag: must be "headers" or "full", got "body"`},
		{name: "negative redirects", args: []string{"--max-redirects=-1"}, want: `"--max-redirects" flag: must not be negative`},
		{name: "bad bool", args: []string{"--no-thresholds=maybe"}, want: `"--no-thresholds" flag: "maybe" is not true or false`},
		{name: "zero batch", args: []string{"--batch", "0"}, want: `"--batch" flag: must be at least 1, got 0`},
		{name: "bad blacklist range", args: []string{"--blacklist-ip", "10.0.0.0/8", "--blacklist-ip", "bogus"}, want: `"--blacklist-ip" flag: "bogus" is not an address range in CIDR notation`},
		{name: "bad hostname pattern", args: []string{"--block-hostnames", "a..b"}, want: `"--block-hostnames" flag: "a..b" is not a host name pattern`},
		{name: "bad env name", args: []string{"-e", "1BAD=x"}, want: `--env "1BAD=x": "1BAD" is not a valid variable name`},
		{name: "env without value", args: []string{"-e", "NOEQUALS"}, want: `--env "NOEQUALS": must be written NAME=VALUE`},
		{name: "unknown flag", args: []string{"--frobnicate"}, want: `unknown flag: --frobnicate`},
		{name: "unknown shorthand", args: []string{"-x"}, want: `unknown shorthand flag: 'x' in -x`},
		{name: "missing config file", args: []string{"-c", "/nonexistent/metronome.json"}, want: `config file "/nonexistent/metronome.json": no such file`},
		{name: "paused without API", args: []string{"--paused"}, want: `--paused needs the REST API to resume the test: set --address`},
		// Environment.
		{name: "K6_PAUSED without API", env: map[string]string{"K6_PAUSED": "true"}, want: `--paused needs the REST API`},
		{name: "K6_VUS", env: map[string]string{"K6_VUS": "abc"}, want: `K6_VUS: "abc" is not a whole number`},
		{name: "K6_DURATION", env: map[string]string{"K6_DURATION": "ten"}, want: `K6_DURATION: "ten" is not a duration`},
		{name: "K6_ITERATIONS", env: map[string]string{"K6_ITERATIONS": "-3"}, want: `K6_ITERATIONS: must be at least 1, got -3`},
		{name: "K6_STAGES", env: map[string]string{"K6_STAGES": "10s"}, want: `K6_STAGES: stage "10s" must be written duration:target`},
		{name: "K6_TAGS", env: map[string]string{"K6_TAGS": "novalue"}, want: `K6_TAGS: tag "novalue" must be written name=value`},
		{name: "K6_SYSTEM_TAGS", env: map[string]string{"K6_SYSTEM_TAGS": "colour"}, want: `K6_SYSTEM_TAGS: unknown system tag "colour"`},
		{name: "K6_SUMMARY_TREND_STATS", env: map[string]string{"K6_SUMMARY_TREND_STATS": "p95"}, want: `K6_SUMMARY_TREND_STATS: unknown trend stat "p95"`},
		{name: "K6_SUMMARY_TIME_UNIT", env: map[string]string{"K6_SUMMARY_TIME_UNIT": "m"}, want: `K6_SUMMARY_TIME_UNIT: unknown time unit "m"`},
		{name: "K6_NO_THRESHOLDS", env: map[string]string{"K6_NO_THRESHOLDS": "maybe"}, want: `K6_NO_THRESHOLDS: "maybe" is not true or false`},
		{name: "K6_SETUP_TIMEOUT", env: map[string]string{"K6_SETUP_TIMEOUT": "soon"}, want: `K6_SETUP_TIMEOUT: "soon" is not a duration`},
		{name: "K6_SUMMARY_MODE", env: map[string]string{"K6_SUMMARY_MODE": "loud"}, want: `K6_SUMMARY_MODE: unknown summary mode "loud"`},
		{name: "K6_QUIET", env: map[string]string{"K6_QUIET": "perhaps"}, want: `K6_QUIET: "perhaps" is not true or false`},
		{name: "K6_NO_COLOR", env: map[string]string{"K6_NO_COLOR": "perhaps"}, want: `K6_NO_COLOR: "perhaps" is not true or false`},
		{name: "K6_INCLUDE_SYSTEM_ENV_VARS", env: map[string]string{"K6_INCLUDE_SYSTEM_ENV_VARS": "no way"}, want: `K6_INCLUDE_SYSTEM_ENV_VARS: "no way" is not true or false`},
		{name: "K6_HTTP_DEBUG", env: map[string]string{"K6_HTTP_DEBUG": "body"}, want: `K6_HTTP_DEBUG: must be "headers" or "full"`},
		{name: "K6_CONFIG missing", env: map[string]string{"K6_CONFIG": "/nonexistent/c.json"}, want: `config file "/nonexistent/c.json": no such file`},
		// Script options.
		{name: "script vus type", script: `{"vus": "ten"}`, want: `options.vus: expected a whole number, got "ten" (in script options)`},
		{name: "script duration type", script: `{"duration": true}`, want: `options.duration: expected a duration such as "30s" or a number of milliseconds, got true`},
		{name: "script stage without duration", script: `{"stages": [{"target": 1}]}`, want: `options.stages[0].duration: required`},
		{name: "script threshold not a list", script: `{"thresholds": {"http_reqs": "count>1"}}`, want: `options.thresholds.http_reqs: expected an array of thresholds`},
		{name: "script trend stat", script: `{"summaryTrendStats": ["p99"]}`, want: `options.summaryTrendStats[0]: unknown trend stat "p99"`},
		{name: "script system tag", script: `{"systemTags": ["colour"]}`, want: `options.systemTags[0]: unknown system tag "colour"`},
		{name: "script time unit", script: `{"summaryTimeUnit": "minutes"}`, want: `options.summaryTimeUnit: unknown time unit "minutes"`},
		{name: "script bool type", script: `{"noSetup": "yes"}`, want: `options.noSetup: expected true or false, got "yes"`},
		{name: "script not an object", script: `[1]`, want: `options: expected an object, got an array`},
		{name: "unknown executor", script: `{"scenarios": {"a": {"executor": "foo"}}}`, want: `scenarios.a.executor: unknown executor "foo"; available: `},
		{name: "scenario without executor", script: `{"scenarios": {"a": {"vus": 1}}}`, want: `scenarios.a.executor: required`},
		{name: "unknown scenario option", script: `{"scenarios": {"a": {"executor": "constant-vus", "vus": 1, "duration": "10s", "bogus": 1}}}`, want: `scenarios.a.bogus`},
		{name: "exec not exported", script: `{"scenarios": {"a": {"executor": "constant-vus", "vus": 1, "duration": "10s", "exec": "nope"}}}`,
			want: `scenarios.a.exec: the script does not export a function named "nope"`},
		// Conflicting shortcuts.
		{name: "iterations+stages", script: `{"iterations": 5, "stages": [{"duration": "1s", "target": 1}]}`, want: `options.iterations and options.stages cannot be used together (both set in script options)`},
		{name: "iterations+scenarios", script: `{"iterations": 5, "scenarios": {"a": ` + scenario + `}}`, want: `options.iterations and options.scenarios cannot be used together`},
		{name: "duration+stages", script: `{"duration": "5s", "stages": [{"duration": "1s", "target": 1}]}`, want: `options.duration and options.stages cannot be used together`},
		{name: "duration+scenarios", script: `{"duration": "5s", "scenarios": {"a": ` + scenario + `}}`, want: `options.duration and options.scenarios cannot be used together`},
		{name: "stages+scenarios", script: `{"stages": [{"duration": "1s", "target": 1}], "scenarios": {"a": ` + scenario + `}}`, want: `options.stages and options.scenarios cannot be used together`},
		{name: "env iterations+stages", env: map[string]string{"K6_ITERATIONS": "3", "K6_STAGES": "1s:1"}, want: `options.iterations and options.stages cannot be used together (both set in environment)`},
		{name: "flag duration+stage", args: []string{"-d", "5s", "-s", "1s:1"}, want: `options.duration and options.stages cannot be used together (both set in command-line flags)`},
		// Config file.
		{name: "config file type", args: []string{"-c", badConfig}, want: `options.vus: expected a whole number, got "x" (in config file "` + badConfig + `")`},
		{name: "config file syntax", args: []string{"--config", brokenConfig}, want: `invalid JSON at line 3, column 1`},
		{name: "config file out", args: []string{"-c", outConfig}, want: `out: expected an array of strings`},
		{name: "config file collectors", args: []string{"-c", collectorsConfig}, want: `collectors: expected an object of output settings by output name`},
		{name: "config file tag type", args: []string{"-c", tagConfig}, want: `options.tags.a: expected a string, got 1`},
		// The network fence.
		{name: "hosts pinned to a name", script: `{"hosts": {"a.test": "localhost:8080"}}`, want: `options.hosts: a.test: "localhost:8080" is not an IP address or IP:port`},
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.script)
			args := append(append([]string{"run"}, c.args...), "script.js")
			code, stdout, stderr := h.run(c.env, args...)
			if code != exitcode.InvalidConfig {
				t.Errorf("exit code %d, want 104; stderr %q", code, stderr)
			}
			if !strings.HasPrefix(stderr, "ERROR: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr is not one ERROR line: %q", stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q\nwant it to contain %q", stderr, c.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing (no usage dump)", stdout)
			}
			if h.ran != nil {
				t.Error("the engine ran despite the error")
			}
		})
	}
}

func TestBadCommandLines(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "run needs exactly one script (a .js or .ts file), got 0 arguments"},
		{[]string{"run", "a.js", "b.js"}, "got 2 arguments"},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for "metronome"`},
		{[]string{"version", "extra"}, `unknown command "extra" for "metronome version"`},
	}
	for _, c := range cases {
		h := newHarness(t, "")
		code, stdout, stderr := h.run(nil, c.args...)
		if code != exitcode.InvalidConfig || !strings.HasPrefix(stderr, "ERROR: ") || !strings.Contains(stderr, c.want) ||
			strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want 104 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

func TestMissingDefaultExport(t *testing.T) {
	h := newHarness(t, "")
	h.script.exports = []string{"other"}
	code, _, stderr := h.run(nil, "run", "s.js")
	if code != exitcode.InvalidConfig || !strings.Contains(stderr, "scenarios.default.exec: the script has no default export") {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
}

func TestErrorsKeepTheirExitCode(t *testing.T) {
	h := newHarness(t, "")
	h.loadErr = exitcode.Errorf(exitcode.ScriptException, "script.js:3:5: ReferenceError: x is not defined\n\tat default (script.js:3:5)")
	code, _, stderr := h.run(nil, "run", "script.js")
	if code != exitcode.ScriptException || stderr != "ERROR: script.js:3:5: ReferenceError: x is not defined at default (script.js:3:5)\n" {
		t.Errorf("code %d, stderr %q", code, stderr)
	}

	h = newHarness(t, "")
	h.engine = func(context.Context, engine.Config) error {
		return exitcode.Errorf(exitcode.ThresholdsFailed, "thresholds on metrics 'http_req_duration' have been crossed")
	}
	code, stdout, stderr := h.run(nil, "run", "script.js")
	if code != exitcode.ThresholdsFailed || stderr != "ERROR: thresholds on metrics 'http_req_duration' have been crossed\n" || stdout != "" {
		t.Errorf("code %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	h = newHarness(t, "")
	h.engine = func(context.Context, engine.Config) error { return errors.New("disk full") }
	if code, _, stderr := h.run(nil, "run", "script.js"); code != exitcode.Generic || stderr != "ERROR: disk full\n" {
		t.Errorf("an uncoded error: code %d, stderr %q", code, stderr)
	}
}

func TestPanicBecomesExit109(t *testing.T) {
	h := newHarness(t, "")
	h.engine = func(context.Context, engine.Config) error { panic("boom\nsecond line") }
	code, _, stderr := h.run(nil, "run", "s.js")
	if code != exitcode.GoPanic || stderr != "ERROR: internal error, a bug in metronome: boom second line\n" {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
	code, _, stderr = h.run(map[string]string{"METRONOME_DEBUG": "1"}, "run", "s.js")
	if code != exitcode.GoPanic || !strings.Contains(stderr, "goroutine ") || !strings.Contains(stderr, "runtime/debug.Stack") {
		t.Errorf("METRONOME_DEBUG: code %d, stderr %q", code, stderr)
	}
}

// fakeSignals replaces the signal plumbing; send delivers a signal.
type fakeSignals struct {
	mu      sync.Mutex
	ch      chan<- os.Signal
	exited  chan int
	stopped bool
}

func newFakeSignals(t *testing.T) *fakeSignals {
	f := &fakeSignals{exited: make(chan int, 1)}
	oldNotify, oldExit := notifySignals, exitNow
	t.Cleanup(func() { notifySignals, exitNow = oldNotify, oldExit })
	notifySignals = func(c chan<- os.Signal) func() {
		f.mu.Lock()
		f.ch = c
		f.mu.Unlock()
		return func() {
			f.mu.Lock()
			f.stopped = true
			f.mu.Unlock()
		}
	}
	exitNow = func(code int) { f.exited <- code }
	return f
}

func (f *fakeSignals) send() { f.sendSignal(os.Interrupt) }

func (f *fakeSignals) sendSignal(s os.Signal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ch <- s
}

func TestFirstSignalAbortsGracefully(t *testing.T) {
	sig := newFakeSignals(t)
	h := newHarness(t, "")
	h.engine = func(ctx context.Context, _ engine.Config) error {
		sig.send()
		select {
		case <-ctx.Done():
			return nil // the engine ran teardown and the summary
		case <-time.After(10 * time.Second):
			return errors.New("context not cancelled by the signal")
		}
	}
	code, _, stderr := h.run(nil, "run", "s.js")
	if code != exitcode.ExternalAbort || !strings.Contains(stderr, "received interrupt") ||
		!strings.HasSuffix(stderr, "ERROR: test run aborted by signal\n") {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
	if !sig.stopped {
		t.Error("signal handler not released")
	}
}

// A second signal ends the process at once; so does another signal than
// the first, however soon. The test's time is virtual (synctest).
func TestSecondSignalExitsAtOnce(t *testing.T) {
	for _, c := range []struct {
		second os.Signal
		after  time.Duration
	}{
		{os.Interrupt, signalEcho}, // Ctrl+C again
		{syscall.SIGTERM, time.Millisecond},
	} {
		synctest.Test(t, func(t *testing.T) {
			sig := newFakeSignals(t)
			h := newHarness(t, "")
			var exited int
			h.engine = func(ctx context.Context, _ engine.Config) error {
				sig.send()
				<-ctx.Done()
				time.Sleep(c.after) // teardown is slow; the user presses Ctrl+C again
				sig.sendSignal(c.second)
				select {
				case exited = <-sig.exited:
				case <-time.After(10 * time.Second):
				}
				return exitcode.Errorf(exitcode.ExternalAbort, "test run aborted by signal")
			}
			code, _, stderr := h.run(nil, "run", "s.js")
			if exited != exitcode.ExternalAbort || code != exitcode.ExternalAbort {
				t.Errorf("%v %v after the first: exit %d, code %d, want 105; stderr %q", c.second, c.after, exited, code, stderr)
			}
		})
	}
}

// The first signal delivered twice within signalEcho, as GNU timeout
// delivers it to the process and again to its group, is one signal: the
// run still ends gracefully (teardown, summary, outputs). Before, 1-2
// runs in 10 under timeout took the copy for a second Ctrl+C and lost
// them; k6 v2.2.0 has the same flaw.
func TestRepeatedSignalIsOneSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sig := newFakeSignals(t)
		h := newHarness(t, "")
		h.engine = func(ctx context.Context, _ engine.Config) error {
			sig.sendSignal(syscall.SIGTERM)
			<-ctx.Done()
			time.Sleep(signalEcho - time.Millisecond)
			sig.sendSignal(syscall.SIGTERM)
			time.Sleep(time.Second) // teardown, summary and outputs
			return nil
		}
		code, _, stderr := h.run(nil, "run", "s.js")
		select {
		case c := <-sig.exited:
			t.Errorf("the repeated signal exited at once with %d; stderr %q", c, stderr)
		default:
		}
		if code != exitcode.ExternalAbort || strings.Contains(stderr, "a second signal") || !strings.HasSuffix(stderr, "ERROR: test run aborted by signal\n") {
			t.Errorf("code %d, stderr %q; want 105 after the graceful end", code, stderr)
		}
	})
}

func TestHelpGoesToStdout(t *testing.T) {
	h := newHarness(t, "")
	code, stdout, stderr := h.run(nil, "run", "--help")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "--vus") || !strings.Contains(stdout, "--execution-segment-sequence") {
		t.Errorf("code %d, stderr %q, stdout %q", code, stderr, stdout)
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                       "plain",
		"  a\n\tb  \r\n\n c ":         "a b c",
		"There were problems:\n\t- x": "There were problems: - x",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// The REST API is off unless asked for, as in k6 v2.2.0 (`k6 run --help`:
// "the server is disabled when not set"), so two runs on one machine do
// not fight over a port; K6_ADDRESS sets it and --address wins over it.
func TestRESTAPIAddress(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, nil, ""},
		{map[string]string{"K6_ADDRESS": "127.0.0.1:6565"}, nil, "127.0.0.1:6565"},
		{map[string]string{"K6_ADDRESS": "127.0.0.1:6565"}, []string{"--address", "127.0.0.1:7000"}, "127.0.0.1:7000"},
		{nil, []string{"-a", "localhost:6565", "--paused"}, "localhost:6565"},
	} {
		h := newHarness(t, "")
		code, _, stderr := h.run(c.env, append(append([]string{"run"}, c.args...), "script.js")...)
		if code != 0 || h.ran == nil {
			t.Fatalf("%v %v: exit %d, %s", c.env, c.args, code, stderr)
		}
		if h.ran.Address != c.want {
			t.Errorf("%v %v: the REST API on %q, want %q", c.env, c.args, h.ran.Address, c.want)
		}
	}
}

// The config file's "features" reach the run: an enabled flag becomes the
// k6_feature_ run tag, and a flag from --features replaces the file's list.
func TestConfigFileFeatures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(`{"features":["native-histograms"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "true"},
		{[]string{"--features", "freeze-env"}, ""},
	} {
		h := newHarness(t, "")
		code, _, stderr := h.run(nil, append(append([]string{"run", "-c", path}, c.args...), "script.js")...)
		if code != 0 || h.ran == nil {
			t.Fatalf("%v: exit %d, %s", c.args, code, stderr)
		}
		if got := h.ran.Options.Tags["k6_feature_native_histograms"]; got != c.want {
			t.Errorf("%v: tag k6_feature_native_histograms=%q, want %q", c.args, got, c.want)
		}
	}
}

// --address with port 0 binds any free port, as k6 does, and metronome
// names the port it got in one info line (k6 binds it silently), so a
// caller can reach the API; a fixed port is not announced.
func TestRESTAPIAnyPortAnnounced(t *testing.T) {
	var buf bytes.Buffer
	logs := logsink.NewText(&buf)
	if announceAPI("127.0.0.1:6565", logs) != nil || announceAPI("", logs) != nil {
		t.Fatal("a fixed or absent --address is announced")
	}
	announce := announceAPI("127.0.0.1:0", logs)
	if announce == nil {
		t.Fatal("--address 127.0.0.1:0 is not announced")
	}
	announce("127.0.0.1:41234")
	if got := buf.String(); !strings.Contains(got, "REST API listening on 127.0.0.1:41234") {
		t.Errorf("announced %q", got)
	}
}

// inspect and archive send the init context's console lines through the
// log sink, as run does: logfmt where stderr is not a terminal, as in k6
// (they wrote INFO[0000] lines of their own).
func TestInspectAndArchiveLogLikeRun(t *testing.T) {
	for _, args := range [][]string{{"inspect", "s.js"}, {"archive", "-O", filepath.Join(t.TempDir(), "a.tar"), "s.js"}} {
		h := newHarness(t, `{}`)
		loadScript = func(_ string, o loadOptions) (Script, error) {
			o.Log.Line(logsink.Info, "init { a: 1 }", "console")
			return h.script, nil
		}
		_, _, stderr := h.run(nil, args...)
		if !regexp.MustCompile(`(?m)^time="[^"]+" level=info msg="init \{ a: 1 \}" source=console$`).MatchString(stderr) {
			t.Errorf("%s: stderr %q", args[0], stderr)
		}
	}
}
