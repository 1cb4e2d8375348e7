package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/tool"
	"github.com/metronome-load/metronome/internal/wholefile"
	"github.com/metronome-load/metronome/output/dashboard"
	"github.com/metronome-load/metronome/output/result"
)

func init() { addCommand(newReportCmd) }

// newReportCmd builds `metronome report`: the web dashboard's HTML report
// from HdrHistogram logs (-o hdrlog=FILE), one instance's or several.
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
			err := runReport(ctx, cmd.InOrStdin(), g.stdout, g.stderr, args, out, period)
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

// runReport reads the logs files name and writes their report to out. A
// signal (ctx ending) while it reads stops it, and nothing is written.
func runReport(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, files []string, out string, period time.Duration) error {
	var lr dashboard.LogReader
	for _, name := range files {
		var r io.Reader = stdin
		if name != "-" {
			f, err := result.OpenRegular(name)
			if err != nil {
				return exitcode.Errorf(exitcode.InvalidConfig, "report: cannot read %s: %v", name, tool.PathCause(err))
			}
			defer f.Close()
			r = f
		}
		err := lr.Add(tool.Interruptible(ctx, r), name)
		if ctx.Err() != nil {
			return exitcode.Errorf(exitcode.ExternalAbort, "report: interrupted by signal while reading %s; no report was written", name)
		}
		if err != nil {
			return exitcode.Errorf(exitcode.InvalidConfig, "report: %v", err)
		}
	}
	n, err := writeReport(stdout, stderr, &lr, period, out, func(period time.Duration) string {
		return fmt.Sprintf("Report built from %s; intervals of %s. HdrHistogram logs hold latency histograms only: no VUs, failures, backlog, generator health band or summary tables.",
			strings.Join(files, ", "), period)
	})
	if err != nil || out == "-" {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes) from %d log(s)\n", out, n, len(files))
	return nil
}

// writeReport renders the web dashboard's report of the logs lr read, with
// intervals of at least period and the note describe gives for the
// intervals chosen, and writes it to out ("-": stdout). It returns the
// report's size.
func writeReport(stdout, stderr io.Writer, lr *dashboard.LogReader, period time.Duration, out string, describe func(time.Duration) string) (int, error) {
	tl, err := lr.Timeline(period)
	if err != nil {
		return 0, exitcode.Errorf(exitcode.InvalidConfig, "report: %v", err)
	}
	for _, w := range lr.Warnings() {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	p, err := dashboard.BuildPage(tl, nil, false, describe(tl.Period))
	if err != nil {
		return 0, err
	}
	b, err := p.Render()
	if err != nil {
		return 0, err
	}
	if out == "-" {
		_, err = stdout.Write(b)
		return len(b), err
	}
	if err := wholefile.Write(out, b, 0o644); err != nil {
		return 0, exitcode.Errorf(exitcode.Generic, "report: cannot write %s: %v", out, err)
	}
	return len(b), nil
}
