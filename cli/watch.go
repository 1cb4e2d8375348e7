package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/tool"
	"github.com/metronome-load/metronome/metrics"
)

func init() { addCommand(newWatchCmd) }

// newWatchCmd declares `metronome watch` (tool.Watch): abortOnFail on the union of a
// distributed test's instances, evaluated in Prometheus.
func newWatchCmd(g *globals) *cobra.Command {
	r := &runCmd{g: g, tier: &config.Options{Source: "command-line flags"}}
	w := &tool.Watch{}
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
		RunE: func(cmd *cobra.Command, args []string) error {
			w.Stdout = g.stdout
			if len(args) == 1 {
				w.DefineMetrics = func(ctx context.Context, reg *metrics.Registry, b *metrics.Builtin) (*config.Options, error) {
					return r.defineMetrics(ctx, args[0], reg, b)
				}
			}
			return w.Run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&w.Prometheus, "prometheus", "", "the Prometheus the instances write to, http://host:9090 (required)")
	fs.StringVar(&w.Selector, "select", "", `PromQL label matchers selecting the test's series, e.g. testrun_name="metronome-test"`)
	fs.StringArrayVar(&w.Runners, "runner", nil, "an instance's REST API, http://host:6565 (repeatable)")
	fs.StringVar(&w.Testrun, "testrun", "", "a k6-operator TestRun's name: its runners are http://NAME-service-I:6565 and its series testrun_name=\"NAME\"")
	fs.IntVar(&w.Parallelism, "parallelism", 0, "with --testrun, the TestRun's parallelism")
	fs.StringArrayVar(&w.Thresholds, "threshold", nil, "an abortOnFail threshold besides the script's, 'METRIC[{tag:value}]: EXPRESSION' (repeatable)")
	fs.DurationVar(&w.Interval, "interval", 2*time.Second, "how often the thresholds are evaluated")
	fs.StringArrayVarP(&r.env, "env", "e", nil, "an environment variable for the script, NAME=VALUE (repeatable)")
	fs.StringVarP(&r.configPath, "config", "c", "", "JSON config file holding options (env K6_CONFIG)")
	return cmd
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
