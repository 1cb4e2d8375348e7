package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/internal/tool"
)

func init() { addCommand(newMergeCmd) }

// newMergeCmd declares `metronome merge` (tool.Merge): the HdrHistogram
// logs of several runs or instances (-o hdrlog=FILE) merged into one
// distribution per metric and scenario, and per request name; or the
// result files of a test's instances (-o result=FILE) merged into the
// verdict of the whole test.
// mergeLong is merge's help: what it does with each kind of file.
const mergeLong = `Merge reads HdrHistogram interval logs written with -o hdrlog=FILE and merges
every interval of every file into one distribution per metric and scenario,
and per request name. HdrHistogram merges are exact, so the percentiles are
those of all the requests together, not an average of each instance's
percentiles.

The first table has one row per metric and scenario. When the logs hold
request names (metronome logs the requests' raw durations and their
corrected_latency per name), a second table compares each name's raw
p50/p99/p99.9 (http_req_duration, grpc_req_duration or ws_connecting) with
its corrected ones, slowest corrected p99 first; --by-name prints only that
one. --json prints the rows of the first table, or with --by-name those of
the second. Values are printed in milliseconds; percentiles use the
estimator of the end-of-test summary. A FILE of "-" reads standard input.

Given result files written with -o result=FILE (one per instance of a test
split with --execution-segment, as k6-operator runs it), merge gives the
verdict of the whole test instead: it checks that the files are the
instances of one test and that their segments cover it once, merges every
metric exactly, prints the end-of-test summary of the union, evaluates the
thresholds the files recorded (and --threshold ones) on it, writes
--summary-export, runs the script's handleSummary on it with --script,
writes the HTML report with --report, and exits as a single run would: 99
when a threshold is crossed, 0 otherwise. Files that are not one test's, or
whose segments overlap or leave a part out, are refused with exit code 104.
A file cut short (its runner was killed) is merged for what it holds, the
summary says so, and merge exits 105; a file whose run ended early (a
signal, exec.test.abort()) gives that run's exit code. A DIR argument stands for the result
files in it; --wait waits for the files to be complete (k6-operator's
runners write them while the merge Job already runs).`

func newMergeCmd(g *globals) *cobra.Command {
	m := &tool.Merge{Stdout: g.stdout, Stderr: g.stderr}
	var env []string
	cmd := &cobra.Command{
		Use:   "merge [flags] FILE...",
		Short: "Merge HdrHistogram logs, or the result files of a test's instances into one verdict",
		Long:  mergeLong,
		Example: `  metronome merge instance-1.hlog instance-2.hlog
  metronome merge --by-name --json run-*.hlog
  metronome merge --metric corrected_latency --json run-*.hlog
  metronome merge /results/*.result --summary-export summary.json
  metronome merge --wait 15m --script test.js --report report.html /results/
  metronome merge --threshold 'corrected_latency{name:login}: p(99)<500' a.result b.result`,
		Args:          cobra.MinimumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(c *cobra.Command, args []string) error {
			parent := c.Context()
			if parent == nil {
				parent = context.Background()
			}
			ctx, signalled, stop := g.signalContext(parent, mergeSignals)
			defer stop()
			m.Args, m.Stdin = args, c.InOrStdin()
			m.Set = func(flag string) bool { f := c.Flags().Lookup(flag); return f != nil && f.Changed }
			m.NoColor = g.noColor || g.env["NO_COLOR"] != ""
			m.StdoutTTY, m.StderrTTY = isTTY(g.stdout), isTTY(g.stderr)
			m.Prepare = func() (*logsink.Sink, error) {
				if err := checkSummaryMode("--summary-mode", m.SummaryMode); err != nil {
					return nil, err
				}
				return g.logSink(nil)
			}
			m.LoadScript = func(logs *logsink.Sink) (engine.Script, error) { return loadMergeScript(g, m.Script, env, logs) }
			err := m.Run(ctx)
			if signalled() {
				msg := "merge interrupted by signal"
				if err != nil {
					msg += ": " + err.Error()
				}
				err = exitcode.Errorf(exitcode.ExternalAbort, "%s", msg)
			}
			return err
		},
	}
	cmd.SetOut(g.stdout)
	cmd.SetErr(g.stderr)
	fs := cmd.Flags()
	fs.BoolVar(&m.JSON, "json", false, "print JSON (values in milliseconds) instead of a table")
	fs.StringSliceVar(&m.Metrics, "metric", nil, "only these metrics (repeatable or comma-separated), e.g. corrected_latency,http_req_duration; leaves out the per-name table")
	fs.BoolVar(&m.ByName, "by-name", false, "print only the per-name table of raw vs corrected percentiles")
	cmd.MarkFlagsMutuallyExclusive("by-name", "metric")
	fs.StringArrayVar(&m.Thresholds, "threshold", nil, "result files: another threshold, 'METRIC[{tag:value}]: EXPRESSION', e.g. 'corrected_latency: p(99)<500' (repeatable)")
	fs.StringVar(&m.SummaryExport, "summary-export", "", "result files: write the merged summary as JSON to this file")
	fs.StringVar(&m.SummaryMode, "summary-mode", "compact", "result files: compact, full or disabled")
	fs.StringVar(&m.Script, "script", "", "result files: the test's script (or archive), whose handleSummary gets the merged summary")
	fs.StringArrayVarP(&env, "env", "e", nil, "result files: an environment variable for --script, NAME=VALUE (repeatable)")
	fs.StringVar(&m.Report, "report", "", "result files: write the HTML report of the union to this file")
	fs.DurationVar(&m.Wait, "wait", 0, "result files: wait up to this long for the files to be complete and cover the test")
	return cmd
}

// loadMergeScript loads merge's --script (a script or an archive) with
// the environment of -e, as run loads it.
func loadMergeScript(g *globals, script string, env []string, logs *logsink.Sink) (engine.Script, error) {
	r := &runCmd{g: g, env: env}
	scriptEnv, _, err := r.scriptEnv(true)
	if err != nil {
		return nil, err
	}
	lo := loadOptions{Env: scriptEnv, Stderr: g.stderr, Log: logs, Verbose: g.verbose}
	_, path, err := r.fromArchive(script, &lo)
	if err != nil {
		return nil, err
	}
	return loadScript(path, lo)
}
