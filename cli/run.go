package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/features"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/internal/wholefile"
	"github.com/metronome-load/metronome/secrets"
	"github.com/metronome-load/metronome/summary"
)

func init() { addCommand(newRunCmd) }

// runCmd holds the flags of one `metronome run` command.
type runCmd struct {
	g *globals
	// tier receives the options set by flags (see optionFlag).
	tier *config.Options

	env           []string
	outs          []string
	summaryExport string
	summaryMode   string
	noSummary     bool
	machine       bool
	quiet         bool
	configPath    string
	includeSysEnv bool
	features      []string
	secretSources []string
	address       string
	paused        bool
}

// defaultAddress is where the REST API listens unless --address or
// K6_ADDRESS says otherwise: nowhere, as in k6 v2, so that two runs on one
// machine do not fight over a port.
const defaultAddress = ""

func newRunCmd(g *globals) *cobra.Command {
	r := &runCmd{g: g, tier: &config.Options{Source: "command-line flags"}}
	cmd := &cobra.Command{
		Use:   "run [flags] script.js|script.ts|archive.tar",
		Short: "Run a load test",
		Long: "Run a load test script. Options come, from lowest to highest precedence, from the\n" +
			"config file (-c or K6_CONFIG), the script's exported options, K6_* environment\n" +
			"variables and the flags below.\n\n" +
			"With K6_AUTO_EXTENSION_RESOLUTION=true, a script that imports k6/x modules this binary\n" +
			"lacks runs with a binary built once with them (metronome build, needs Go) and cached.",
		Args: oneScript("run needs exactly one script (a .js or .ts file)"),
		RunE: func(cmd *cobra.Command, args []string) error { return r.run(cmd, args[0]) },
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addOptionFlags(fs, r.tier)
	fs.StringArrayVarP(&r.env, "env", "e", nil, "an environment variable for the script, NAME=VALUE (repeatable)")
	fs.StringArrayVarP(&r.outs, "out", "o", nil, "send results to an output, type[=arg], e.g. json=results.json (repeatable)")
	fs.StringVar(&r.summaryExport, "summary-export", "", "write the end-of-test summary as JSON to this file")
	fs.StringVar(&r.summaryMode, "summary-mode", "", "end-of-test summary: compact, full or disabled (default compact)")
	fs.BoolVar(&r.noSummary, "no-summary", false, "do not print the end-of-test summary (same as --summary-mode=disabled)")
	fs.BoolVar(&r.machine, "new-machine-readable-summary", false, "write k6's versioned machine-readable summary to --summary-export and handleSummary() (env K6_NEW_MACHINE_READABLE_SUMMARY)")
	fs.BoolVarP(&r.quiet, "quiet", "q", false, "do not show the progress display")
	fs.StringVarP(&r.configPath, "config", "c", "", "JSON config file holding options (env K6_CONFIG)")
	fs.BoolVar(&r.includeSysEnv, "include-system-env-vars", true, "pass the process environment to the script's __ENV")
	fs.StringArrayVar(&r.features, "features", nil, "enable feature flags, comma-separated (env K6_FEATURES): native-histograms")
	fs.StringVarP(&r.address, "address", "a", defaultAddress, "address of the REST API (k6's /v1), host:port, e.g. localhost:6565; off when not set")
	fs.BoolVarP(&r.paused, "paused", "p", false, "initialise the VUs, then wait for PATCH /v1/status {\"data\":{\"attributes\":{\"paused\":false}}} before setup()")
	fs.StringArrayVar(&r.secretSources, "secret-source", nil, "a source for k6/secrets: file=PATH, file=name=NAME,filename=PATH[,default] or url=urlTemplate=URL_WITH_{key}[,KEY=VALUE…] (repeatable)")
	return cmd
}

func (r *runCmd) run(cmd *cobra.Command, path string) (err error) {
	g := r.g
	if handedOver, err := autoResolve(cmd.Context(), g, path); handedOver || err != nil {
		return err
	}
	t, err := r.readTiers()
	if err != nil {
		return err
	}
	st, err := r.settings(cmd, t.fileOuts)
	if err != nil {
		return err
	}
	scriptEnv, processEnv, err := r.scriptEnv(st.IncludeSystemEnvVars)
	if err != nil {
		return err
	}
	store, err := secrets.ParseEnv(r.secretSources, g.env)
	if err != nil {
		return exitcode.Errorf(exitcode.InvalidConfig, "--secret-source: %v", err)
	}
	// From here on everything the run prints, its last error line
	// included (execute writes it to g.stderr), hides the secrets the
	// script fetches.
	stdout, stderr := store.Writer(g.stdout), store.Writer(g.stderr)
	g.stdout, g.stderr = stdout, stderr
	defer stderr.Flush()
	defer stdout.Flush()

	// Signals are caught from here on: the init context runs next.
	ctx, signalled, stop := g.signalContext(cmd.Context(), runSignals)
	defer stop()
	logs, err := g.logSink(store)
	if err != nil {
		return err
	}
	defer logs.Close()
	defer func() { err = logged(err, logs) }()
	// Modules read the process environment as k6's LookupEnv does: its
	// -e values show there too, unless the system's variables are left
	// out of __ENV.
	lookup := processEnv
	if !st.IncludeSystemEnvVars {
		lookup = g.env
	}
	lo := loadOptions{Env: scriptEnv, Stderr: g.stderr, Log: logs, Verbose: g.verbose, Secrets: store,
		LookupEnv: func(key string) (string, bool) { v, ok := lookup[key]; return v, ok }}
	given := path
	arch, path, err := r.fromArchive(path, &lo)
	if err != nil {
		return err
	}
	load := func(path string, lo loadOptions) (Script, error) { return loadInterruptibly(ctx, path, lo) }
	script, opts, err := r.loadConsolidated(t, path, arch, lo, load)
	if err != nil {
		return err
	}
	for _, w := range opts.Warnings {
		logs.Line(logsink.Warn, w, "")
	}
	for _, name := range r.applyFeatures(cmd, t.fileFeatures, script.Options(), processEnv, st.Quiet).Names() {
		// k6 tags every sample of the run with each feature flag that is
		// on, e.g. k6_feature_native_histograms=true.
		if opts.Tags == nil {
			opts.Tags = map[string]string{}
		}
		opts.Tags["k6_feature_"+strings.ReplaceAll(name, "-", "_")] = "true"
	}
	if _, err := engine.Scenarios(opts, script); err != nil {
		return err
	}
	var machine *summary.Meta
	if st.MachineSummary {
		// k6's summary holds the main script's source as given (an
		// archive's bytes included); the script loaded, so it reads.
		src, _ := os.ReadFile(given)
		machine = &summary.Meta{Script: string(src)}
	}

	err = runEngine(ctx, engine.Config{
		Script:                 script,
		ScriptPath:             path,
		Options:                opts,
		Outputs:                st.Outputs,
		Collectors:             t.collectors,
		SummaryExport:          st.SummaryExport,
		SummaryMode:            st.SummaryMode,
		MachineReadableSummary: machine,
		Quiet:                  st.Quiet,
		NoColor:                st.NoColor,
		Env:                    processEnv,
		Stdout:                 g.stdout,
		Stderr:                 g.stderr,
		Log:                    logs,
		Secrets:                store,
		StdoutTTY:              isTTY(g.stdout),
		StderrTTY:              isTTY(g.stderr),
		Address:                st.Address,
		APIAddr:                announceAPI(st.Address, logs),
		Paused:                 st.Paused,
	})
	if err == nil && signalled() {
		err = exitcode.Errorf(exitcode.ExternalAbort, "test run aborted by signal")
	}
	return err
}

// logged writes an error k6 logs (the script's exception outside an
// iteration, a script that does not load, exec.test.abort()) to logs as
// k6 logs it, in place of execute's "ERROR:" line, keeping its exit code;
// run, inspect and archive end so, as in k6.
func logged(err error, logs *logsink.Sink) error {
	le, ok := errors.AsType[engine.LoggedError](err)
	if !ok {
		return err
	}
	le.Log(logs.Slog(slog.LevelInfo))
	return exitcode.Wrap(exitcode.Of(err), errReported)
}

// announceAPI returns the hook that tells the user where the REST API
// listens when --address asked for port 0 (any free port), the only case
// in which they cannot know it; k6 binds such a port silently.
func announceAPI(address string, logs *logsink.Sink) func(string) {
	if _, port, err := net.SplitHostPort(address); err != nil || port != "0" {
		return nil
	}
	return func(bound string) { logs.Line(logsink.Info, "REST API listening on "+bound, "") }
}

// tiers are the option tiers read before the script is: the config
// file's, with the file's "out" and "features" lists and "collectors"
// object, and the environment's.
type tiers struct {
	file, env              *config.Options
	fileOuts, fileFeatures []string
	collectors             map[string]json.RawMessage
}

// oneScript is the Args check of a command that takes one script: any
// other count is a usage mistake, told in one sentence that begins with
// what and exits with code 104.
func oneScript(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return exitcode.Errorf(exitcode.InvalidConfig, "%s, got %d arguments", what, len(args))
		}
		return nil
	}
}

// readTiers reads the config file and the K6_* environment tiers, the
// first step of every command that loads a script.
func (r *runCmd) readTiers() (tiers, error) {
	file, extra, err := r.readConfigFile()
	if err != nil {
		return tiers{}, err
	}
	env, err := config.FromEnv(r.g.env)
	if err != nil {
		return tiers{}, err
	}
	return tiers{file: file, env: env, fileOuts: extra.outs, fileFeatures: extra.feats, collectors: extra.collectors}, nil
}

// loadConsolidated loads the script at path with load, which runs its
// init context, and consolidates the options a run of it uses: config
// file, script (or, for a script from arch, the archive's consolidated
// options, which stand for the script's), environment, flags.
func (r *runCmd) loadConsolidated(t tiers, path string, arch *loadedArchive, lo loadOptions, load func(string, loadOptions) (Script, error)) (Script, *config.Options, error) {
	script, err := load(path, lo)
	if err != nil {
		return nil, nil, err
	}
	scriptTier, err := config.Parse(script.Options(), "script options")
	if err != nil {
		return nil, nil, err
	}
	if arch != nil && arch.opts != nil {
		scriptTier = arch.opts
	}
	opts, err := config.Consolidate(t.file, scriptTier, t.env, r.tier)
	if err != nil {
		return nil, nil, err
	}
	if w := proxyWarning(opts, r.g.env); w != "" {
		opts.Warnings = append(opts.Warnings, w)
	}
	return script, opts, nil
}

// proxyWarning names the network options a proxy makes moot when the
// environment sends requests through one, as k6 runs such a test: the
// proxy resolves and connects to the hosts of the HTTP and WebSocket
// requests it carries, so hosts cannot pin them and blacklistIPs sees
// their addresses only when a URL's host is one (package dialer checks
// that, and blockHostnames, before the proxy is asked).
func proxyWarning(o *config.Options, env map[string]string) string {
	var moot, vars []string
	if len(o.Hosts) > 0 {
		moot = append(moot, "options.hosts")
	}
	if len(o.BlacklistIPs) > 0 {
		moot = append(moot, "options.blacklistIPs")
	}
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		if env[k] != "" {
			vars = append(vars, k)
		}
	}
	if len(moot) == 0 || len(vars) == 0 {
		return ""
	}
	verb := "names"
	if len(vars) > 1 {
		verb = "name"
	}
	return fmt.Sprintf("%s: %s %s a proxy, which resolves and connects to the hosts of the HTTP and WebSocket requests it carries: hosts does not apply to them, and blacklistIPs only to a URL whose host is an IP address; both still apply to the proxy's own address and to gRPC, which uses no proxy",
		strings.Join(moot, ", "), strings.Join(vars, " and "), verb)
}

// readConfigFile reads the config file tier from -c/--config or
// K6_CONFIG; none is read when neither is given. Besides options, the file
// may hold "out", a list of outputs, "features", a list of feature flags,
// and "collectors", the outputs' own settings; they are returned apart.
func (r *runCmd) readConfigFile() (o *config.Options, extra fileExtras, err error) {
	path := r.configPath
	if path == "" {
		path = r.g.env["K6_CONFIG"]
	}
	if path == "" {
		return nil, extra, nil
	}
	source := fmt.Sprintf("config file %q", path)
	raw, err := os.ReadFile(path)
	if err != nil {
		reason := err.Error()
		if os.IsNotExist(err) {
			reason = "no such file"
		}
		return nil, extra, exitcode.Errorf(exitcode.InvalidConfig, "%s: %s", source, reason)
	}
	o, err = config.Parse(raw, source)
	if err != nil {
		return nil, extra, err
	}
	var top struct {
		Out        json.RawMessage `json:"out"`
		Features   json.RawMessage `json:"features"`
		Collectors json.RawMessage `json:"collectors"`
	}
	_ = json.Unmarshal(raw, &top) // Parse has accepted raw as an object
	if len(top.Out) > 0 && string(top.Out) != "null" {
		if err := json.Unmarshal(top.Out, &extra.outs); err != nil {
			return nil, extra, exitcode.Errorf(exitcode.InvalidConfig, "out: expected an array of strings such as [\"json=results.json\"] (in %s)", source)
		}
	}
	if len(top.Features) > 0 && string(top.Features) != "null" {
		if err := json.Unmarshal(top.Features, &extra.feats); err != nil {
			return nil, extra, exitcode.Errorf(exitcode.InvalidConfig, "features: expected an array of strings such as [\"native-histograms\"] (in %s)", source)
		}
	}
	if len(top.Collectors) > 0 && string(top.Collectors) != "null" {
		if err := json.Unmarshal(top.Collectors, &extra.collectors); err != nil {
			return nil, extra, exitcode.Errorf(exitcode.InvalidConfig, "collectors: expected an object of output settings by output name, such as {\"xk6-influxdb\": {...}} (in %s)", source)
		}
	}
	return o, extra, nil
}

// fileExtras are what a config file holds beside options: its "out",
// "features" and "collectors".
type fileExtras struct {
	outs, feats []string
	collectors  map[string]json.RawMessage
}

// applyFeatures resolves k6's feature flags, reports them as k6 does
// (an unknown flag is reported, not fatal) and switches what they
// enable: native-histograms makes the Prometheus remote-write output send
// trends as native histograms, through the variable it reads. It returns
// the resolved set, whose flags also become run tags.
func (r *runCmd) applyFeatures(cmd *cobra.Command, fileFeatures []string, scriptOptions json.RawMessage, outputEnv map[string]string, quiet bool) features.Set {
	var inScript struct {
		Features json.RawMessage `json:"features"`
	}
	_ = json.Unmarshal(scriptOptions, &inScript)
	envVal, envSet := r.g.env["K6_FEATURES"]
	set := features.Resolve(features.Sources{
		ConfigFile: fileFeatures,
		Env:        envVal,
		EnvSet:     envSet,
		Flag:       r.features,
		FlagSet:    cmd.Flags().Changed("features"),
		Script:     len(inScript.Features) > 0 && string(inScript.Features) != "null",
		LegacyEnv:  outputEnv[features.LegacyNativeHistogramsEnv],
	})
	for _, w := range set.Warnings {
		fmt.Fprintf(r.g.stderr, "WARN[0000] %s\n", w)
	}
	if !quiet {
		for _, l := range set.Info {
			fmt.Fprintf(r.g.stderr, "INFO[0000] %s\n", l)
		}
	}
	if set.Enabled(features.NativeHistograms) {
		outputEnv[features.LegacyNativeHistogramsEnv] = "true"
	}
	return set
}

// checkSummaryMode refuses a summary mode other than compact, full and
// disabled; from names where it was set.
func checkSummaryMode(from, mode string) error {
	switch mode {
	case "compact", "full", "disabled":
		return nil
	}
	return exitcode.Errorf(exitcode.InvalidConfig, "%s: unknown summary mode %q; use compact, full or disabled", from, mode)
}

// settingFlags are the run command's flags that set a run setting
// (config.Settings), each with the value it holds.
func (r *runCmd) settingFlags() map[string]any {
	return map[string]any{
		"out": r.outs, "summary-export": r.summaryExport, "summary-mode": r.summaryMode,
		"new-machine-readable-summary": r.machine, "quiet": r.quiet,
		"include-system-env-vars": r.includeSysEnv, "address": r.address, "paused": r.paused,
	}
}

// settings resolves the run settings from flags, K6_* variables and the
// config file, in that order of precedence, through config's table; then
// what only the command knows: K6_WEB_DASHBOARD, --no-summary, NO_COLOR
// and --no-color.
func (r *runCmd) settings(cmd *cobra.Command, fileOuts []string) (config.Settings, error) {
	env := r.g.env
	st := config.DefaultSettings(defaultAddress, fileOuts)
	flags := r.settingFlags()
	for name := range flags {
		if !cmd.Flags().Changed(name) {
			delete(flags, name)
		}
	}
	if err := st.Layer(env, flags); err != nil {
		return st, err
	}
	var err error
	if st.Outputs, err = addWebDashboard(env, st.Outputs); err != nil {
		return st, err
	}
	if r.noSummary {
		st.SummaryMode = "disabled"
	}
	if env["NO_COLOR"] != "" || r.g.noColor {
		st.NoColor = true
	}
	return st, nil
}

// envBool reads a boolean K6_* variable; unset or empty is false.
func envBool(env map[string]string, name string) (bool, error) {
	v := strings.TrimSpace(env[name])
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, exitcode.Errorf(exitcode.InvalidConfig, "%s: %q is not true or false", name, v)
	}
	return b, nil
}

var envNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// scriptEnv builds the script's __ENV (the process environment unless
// --include-system-env-vars=false, then the -e values) and the environment
// outputs read their K6_* settings from (the process environment and the
// -e values).
func (r *runCmd) scriptEnv(includeSys bool) (scriptEnv, processEnv map[string]string, err error) {
	scriptEnv = map[string]string{}
	processEnv = make(map[string]string, len(r.g.env)+len(r.env))
	for k, v := range r.g.env {
		processEnv[k] = v
		if includeSys {
			scriptEnv[k] = v
		}
	}
	for _, kv := range r.env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, nil, exitcode.Errorf(exitcode.InvalidConfig, "--env %q: must be written NAME=VALUE", kv)
		}
		if !envNameRE.MatchString(name) {
			return nil, nil, exitcode.Errorf(exitcode.InvalidConfig,
				"--env %q: %q is not a valid variable name (letters, digits and _, not starting with a digit)", kv, name)
		}
		scriptEnv[name] = value
		processEnv[name] = value
	}
	return scriptEnv, processEnv, nil
}

// isTTY reports whether w is a terminal.
func isTTY(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	fd := f.Fd()
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}

// signalEcho is how soon a repeat of the first signal is taken for the
// same one delivered twice rather than a second: GNU timeout (and other
// supervisors) signal both the process and its process group, and the two
// copies arrive microseconds apart, while a person's second Ctrl+C comes
// a good deal later. Taking the copy for "Ctrl+C again" lost teardown,
// the summary and the end of the outputs in 1-2 runs of 10.
const signalEcho = 100 * time.Millisecond

// signalWords say what a command does on the first signal and what a
// second one cuts short, in its warnings.
type signalWords struct{ first, second string }

// runSignals are run's: the engine aborts the test gracefully.
var runSignals = signalWords{
	first:  "stopping the test",
	second: "whatever was still running (teardown, summary, outputs) is cut short",
}

// signalContext returns a context cancelled by the first SIGINT or
// SIGTERM: the engine then aborts the test gracefully (teardown and the
// summary still run), and the commands that read results stop reading and
// finish the files they write. A second signal ends the process at once
// with exit code 105, unless it is the first one again within signalEcho;
// the temporary files of the writes under way are removed, so no file is
// left cut short. signalled reports whether a signal arrived; stop
// releases the signal handler.
func (g *globals) signalContext(parent context.Context, words signalWords) (ctx context.Context, signalled func() bool, stop func()) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	unnotify := notifySignals(sigs)
	done := make(chan struct{})
	got := make(chan struct{})
	go func() {
		var first os.Signal
		var at time.Time
		select {
		case first = <-sigs:
			at = time.Now()
			fmt.Fprintf(g.stderr, "WARN[%s] received %v: %s; press Ctrl+C again to exit at once\n", g.stamp(), first, words.first)
			close(got)
			cancel()
		case <-done:
			return
		}
		for {
			select {
			case s := <-sigs:
				if s == first && time.Since(at) < signalEcho {
					continue
				}
				fmt.Fprintf(g.stderr, "ERROR: received %v again, a second signal: exiting at once, %s\n", s, words.second)
				wholefile.RemovePending()
				exitNow(exitcode.ExternalAbort)
				return
			case <-done:
				return
			}
		}
	}()
	signalled = func() bool {
		select {
		case <-got:
			return true
		default:
			return false
		}
	}
	stop = func() {
		close(done)
		unnotify()
		cancel()
	}
	return ctx, signalled, stop
}

// loadInterruptibly loads the script, which runs its init context once,
// and gives up when ctx ends first (a signal): an init context can loop
// or wait for long, and nothing has been measured yet that a graceful stop
// would save, so the run ends at once with exit code 105. k6 has no
// handler at this stage and dies of the signal itself.
func loadInterruptibly(ctx context.Context, path string, o loadOptions) (Script, error) {
	type loaded struct {
		s   Script
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		s, err := loadScript(path, o)
		done <- loaded{s, err}
	}()
	select {
	case l := <-done:
		return l.s, l.err
	case <-ctx.Done():
		return nil, exitcode.Errorf(exitcode.ExternalAbort, "test run aborted by signal while the script's init context ran")
	}
}
