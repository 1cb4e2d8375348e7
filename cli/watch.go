package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/tool"
	"github.com/metronome-load/metronome/internal/watch"
	"github.com/metronome-load/metronome/metrics"
)

func init() { addCommand(newWatchCmd) }

// watchFlags are the flags of `metronome watch`.
type watchFlags struct {
	prometheus  string
	selector    string
	runners     []string
	testrun     string
	parallelism int
	thresholds  []string
	interval    time.Duration
}

// operatorPort is the port of k6-operator's runner services.
const operatorPort = 6565

// newWatchCmd is `metronome watch`: abortOnFail on the union of a
// distributed test's instances, evaluated in Prometheus.
func newWatchCmd(g *globals) *cobra.Command {
	r := &runCmd{g: g, tier: &config.Options{Source: "command-line flags"}}
	w := &watchFlags{}
	cmd := &cobra.Command{
		Use:   "watch [flags] [script.js|archive.tar]",
		Short: "Stop every instance of a distributed test when an abortOnFail threshold is crossed on their union",
		Long: `Watch evaluates the abortOnFail thresholds of a test split over several
instances (k6-operator's runners) on the union of the instances, in the
Prometheus they remote-write to (-o experimental-prometheus-rw with
K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true), every --interval, and
stops every instance through its REST API (PATCH /v1/status, as
k6-operator's stopper does) once one is crossed. The thresholds are the
script's (only those with abortOnFail) and --threshold ones.

Percentiles and averages come from the instances' native histograms summed:
within one bucket of the exact value (a factor of 2^(1/8), about 9%, at
schema 3); counts are exact. Thresholds Prometheus cannot add up over the
instances (min and max of a trend, a rate other than http_req_failed, a
gauge other than vus) are listed and left to the end-of-test merge of the
result files, which is exact.

It waits for the instances to start and ends when they have: exit code 99
when it stopped them, 0 when the test ended without crossing, 104 when no
threshold can be watched. Each query to Prometheus has 10 s; when none
is answered for a minute of the test, or the test ends without one value
read, the watch exits 255 (the runners go on): it protected nothing.`,
		Example: `  metronome watch --prometheus http://prometheus:9090 --testrun metronome-test --parallelism 4 test.js
  metronome watch --prometheus http://127.0.0.1:9090 --select 'testid="t1"' \
    --runner http://10.0.0.1:6565 --runner http://10.0.0.2:6565 \
    --threshold 'corrected_latency: p(99)<500'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return r.watch(cmd.Context(), w, args) },
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&w.prometheus, "prometheus", "", "the Prometheus the instances write to, http://host:9090 (required)")
	fs.StringVar(&w.selector, "select", "", `PromQL label matchers selecting the test's series, e.g. testrun_name="metronome-test"`)
	fs.StringArrayVar(&w.runners, "runner", nil, "an instance's REST API, http://host:6565 (repeatable)")
	fs.StringVar(&w.testrun, "testrun", "", "a k6-operator TestRun's name: its runners are http://NAME-service-I:6565 and its series testrun_name=\"NAME\"")
	fs.IntVar(&w.parallelism, "parallelism", 0, "with --testrun, the TestRun's parallelism")
	fs.StringArrayVar(&w.thresholds, "threshold", nil, "an abortOnFail threshold besides the script's, 'METRIC[{tag:value}]: EXPRESSION' (repeatable)")
	fs.DurationVar(&w.interval, "interval", 2*time.Second, "how often the thresholds are evaluated")
	fs.StringArrayVarP(&r.env, "env", "e", nil, "an environment variable for the script, NAME=VALUE (repeatable)")
	fs.StringVarP(&r.configPath, "config", "c", "", "JSON config file holding options (env K6_CONFIG)")
	return cmd
}

func (r *runCmd) watch(ctx context.Context, w *watchFlags, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if w.prometheus == "" {
		return exitcode.Errorf(exitcode.InvalidConfig, "--prometheus is required: the Prometheus the instances write to")
	}
	if w.interval <= 0 {
		return exitcode.Errorf(exitcode.InvalidConfig, "--interval must be positive")
	}
	runners := w.runners
	selector := w.selector
	if w.testrun != "" {
		if w.parallelism < 1 {
			return exitcode.Errorf(exitcode.InvalidConfig, "--testrun needs --parallelism, the TestRun's number of runners")
		}
		for i := 1; i <= w.parallelism; i++ {
			runners = append(runners, fmt.Sprintf("http://%s-service-%d:%d", w.testrun, i, operatorPort))
		}
		if selector == "" {
			selector = fmt.Sprintf("testrun_name=%q", w.testrun)
		}
	}
	if len(runners) == 0 {
		return exitcode.Errorf(exitcode.InvalidConfig, "no runners to stop: give --runner URL for each instance, or --testrun and --parallelism")
	}
	extra, err := tool.ParseThresholds(w.thresholds)
	if err != nil {
		return err
	}
	reg := metrics.NewRegistry()
	builtin := metrics.RegisterBuiltin(reg)
	defs := map[string][]metrics.ThresholdDef{}
	if len(args) == 1 {
		opts, err := r.defineMetrics(ctx, args[0], reg, builtin)
		if err != nil {
			return err
		}
		for k, v := range engine.ThresholdDefs(opts) {
			defs[k] = append(defs[k], v...)
		}
	}
	for k, v := range extra {
		for _, d := range v {
			d.AbortOnFail = true
			defs[k] = append(defs[k], d)
		}
	}
	out, err := watch.Run(ctx, watch.Config{
		Prometheus: w.prometheus, Selector: selector, Runners: runners,
		Thresholds: defs, Registry: reg, Interval: w.interval, Stdout: r.g.stdout,
	})
	if err != nil {
		if ctx.Err() != nil {
			return exitcode.Errorf(exitcode.ExternalAbort, "the watch was stopped by a signal")
		}
		if out != nil || errors.Is(err, watch.ErrBlind) {
			return exitcode.Errorf(exitcode.Generic, "%v", err)
		}
		return exitcode.Errorf(exitcode.InvalidConfig, "%v", err)
	}
	if len(out.Crossed) > 0 {
		return exitcode.Errorf(exitcode.ThresholdsFailed, "thresholds %s were crossed on the union of %d runners, which were stopped",
			strings.Join(out.Crossed, ", "), len(runners))
	}
	return nil
}

// defineMetrics loads the script at path as inspect does, defines its
// metrics in reg (its init context runs once more, as for a VU) and
// returns its consolidated options.
func (r *runCmd) defineMetrics(ctx context.Context, path string, reg *metrics.Registry, b *metrics.Builtin) (*config.Options, error) {
	t, err := r.readTiers()
	if err != nil {
		return nil, err
	}
	scriptEnv, _, err := r.scriptEnv(true)
	if err != nil {
		return nil, err
	}
	lo := loadOptions{Env: scriptEnv, Stderr: r.g.stderr, Verbose: r.g.verbose}
	arch, path, err := r.fromArchive(path, &lo)
	if err != nil {
		return nil, err
	}
	script, opts, err := r.loadConsolidated(t, path, arch, lo, loadScript)
	if err != nil {
		return nil, err
	}
	if err := script.Configure(opts, reg, b, nil); err != nil {
		return nil, err
	}
	if _, err := script.NewVU(ctx, 0, metrics.RecorderFunc(func(metrics.Sample) {})); err != nil {
		return nil, err
	}
	return opts, nil
}
