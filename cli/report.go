package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/tool"
)

func init() { addCommand(newReportCmd) }

// newReportCmd declares `metronome report` (tool.Report): the web
// dashboard's HTML report from HdrHistogram logs (-o hdrlog=FILE), one
// instance's or several.
func newReportCmd(g *globals) *cobra.Command {
	var (
		out    string
		period time.Duration
	)
	cmd := &cobra.Command{
		Use:   "report [flags] FILE.hlog...",
		Short: "Build the HTML report of raw vs corrected latency from HdrHistogram logs",
		Long: `Report reads HdrHistogram interval logs written with -o hdrlog=FILE and writes
the web dashboard's self-contained HTML report: latency over time, schedule
lag, intended vs achieved rate and the percentile spectrum, for the whole
test and each scenario, and per request name a table of raw against
corrected p50/p99/p99.9 with each name's latency over time. The logs of
several instances of the same test are merged exactly, interval by
interval. A FILE of "-" reads standard input.

The logs hold only latency histograms, so the report has no VUs, failures or
backlog charts, no generator health band and no summary tables; those come
with a live run's K6_WEB_DASHBOARD_EXPORT.`,
		Example: `  metronome report run.hlog -o report.html
  metronome report instance-1.hlog instance-2.hlog -o report.html`,
		Args:          cobra.MinimumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("period") && period < time.Second {
				// The logs' intervals are a second or more: a shorter
				// period cannot be drawn, and 0 or less is no period.
				return exitcode.Errorf(exitcode.InvalidConfig, "--period: must be at least 1s, the logs' own resolution, got %s (leave it out for the logs' own intervals)", period)
			}
			ctx, signalled, stop := g.signalContext(cmd.Context(), readSignals)
			defer stop()
			r := tool.Report{Files: args, Out: out, Period: period, Stdin: cmd.InOrStdin(), Stdout: g.stdout, Stderr: g.stderr}
			err := r.Run(ctx)
			if err == nil && signalled() {
				// It came while the report was written: it was finished.
				err = exitcode.Errorf(exitcode.ExternalAbort, "report: interrupted by signal; %s was written whole", out)
			}
			return err
		},
	}
	cmd.SetOut(g.stdout)
	cmd.SetErr(g.stderr)
	cmd.Flags().StringVarP(&out, "out", "o", "report.html", "the HTML file to write (- for standard output)")
	cmd.Flags().DurationVar(&period, "period", 0, "length of the charts' intervals (default: the logs' own, lengthened to at most 360 intervals)")
	return cmd
}
