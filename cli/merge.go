package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/output/hdrlog"
	"github.com/metronome-load/metronome/output/result"
)

func init() { addCommand(newMergeCmd) }

// newMergeCmd registers `metronome merge` with the root command.
func newMergeCmd(g *globals) *cobra.Command {
	cmd := newMergeCommand(g.stdout, g.stderr)
	addVerdict(cmd, g)
	return cmd
}

// newMergeCommand builds `metronome merge`: it merges the HdrHistogram
// interval logs of several runs or instances (-o hdrlog=FILE) into one
// distribution per metric and scenario, and per request name, and prints
// their numbers.
func newMergeCommand(stdout, stderr io.Writer) *cobra.Command {
	var (
		asJSON, byName bool
		metrics        []string
	)
	cmd := &cobra.Command{
		Use:   "merge [flags] FILE...",
		Short: "Merge HdrHistogram logs of several runs or instances into one distribution",
		Long: `Merge reads HdrHistogram interval logs written with -o hdrlog=FILE and merges
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
estimator of the end-of-test summary. A FILE of "-" reads standard input.`,
		Example: `  metronome merge instance-1.hlog instance-2.hlog
  metronome merge --by-name --json run-*.hlog
  metronome merge --metric corrected_latency --json run-*.hlog`,
		Args:          cobra.MinimumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runMerge(ctx, interruptible(ctx, cmd.InOrStdin()), stdout, stderr, args, metrics, asJSON, byName)
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (values in milliseconds) instead of a table")
	cmd.Flags().StringSliceVar(&metrics, "metric", nil, "only these metrics (repeatable or comma-separated), e.g. corrected_latency,http_req_duration; leaves out the per-name table")
	cmd.Flags().BoolVar(&byName, "by-name", false, "print only the per-name table of raw vs corrected percentiles")
	cmd.MarkFlagsMutuallyExclusive("by-name", "metric")
	return cmd
}

func runMerge(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, files, metrics []string, asJSON, byName bool) error {
	m := hdrlog.NewMerger()
	for _, name := range files {
		if err := addLog(ctx, m, stdin, name); err != nil {
			if exitcode.Of(err) == exitcode.ExternalAbort {
				return err
			}
			return exitcode.Wrap(exitcode.InvalidConfig, err)
		}
	}
	for _, w := range m.Warnings() {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	var eps []hdrlog.EndpointSummary
	if len(metrics) == 0 {
		for _, e := range m.Endpoints() {
			eps = append(eps, e.Summarize(hdrlog.EndpointPercentiles))
		}
		hdrlog.SortEndpoints(eps)
	}
	if byName {
		if len(eps) == 0 {
			return fmt.Errorf("the logs hold no request names (logs written before metronome logged them per name, or requests without a name tag)")
		}
		if asJSON {
			return hdrlog.WriteEndpointJSON(stdout, eps)
		}
		fmt.Fprintf(stdout, "%d request name(s) from %d file(s); values in milliseconds\n\n", len(eps), len(files))
		return hdrlog.WriteEndpointTable(stdout, eps, hdrlog.EndpointPercentiles)
	}
	dists := m.Distributions(metrics...)
	if len(dists) == 0 {
		var found []string
		seen := map[string]bool{}
		for _, d := range m.Distributions() {
			if !seen[d.Metric] {
				seen[d.Metric] = true
				found = append(found, d.Metric)
			}
		}
		return fmt.Errorf("no metric %s in the logs; they hold %s", strings.Join(metrics, ", "), strings.Join(found, ", "))
	}
	sums := make([]hdrlog.Summary, 0, len(dists))
	intervals := 0
	for _, d := range dists {
		if d.Dropped > 0 {
			fmt.Fprintf(stderr, "warning: %d values of %s did not fit the merged histogram and were left out\n", d.Dropped, d.Tag)
		}
		intervals += d.Intervals
		sums = append(sums, d.Summarize(hdrlog.Percentiles))
	}
	if asJSON {
		return hdrlog.WriteJSON(stdout, sums)
	}
	fmt.Fprintf(stdout, "merged %d interval histograms from %d file(s); values in milliseconds\n\n", intervals, len(files))
	if err := hdrlog.WriteTable(stdout, sums, hdrlog.Percentiles); err != nil {
		return err
	}
	if len(eps) == 0 {
		return nil
	}
	fmt.Fprintf(stdout, "\nper request name: raw (the request's own time) vs corrected (corrected_latency), slowest corrected p99 first\n\n")
	return hdrlog.WriteEndpointTable(stdout, eps, hdrlog.EndpointPercentiles)
}

func addLog(ctx context.Context, m *hdrlog.Merger, stdin io.Reader, name string) error {
	if name == "-" {
		return m.Add(stdin, "standard input")
	}
	f, err := result.OpenRegular(name)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", name, unwrapPath(err))
	}
	defer f.Close()
	return m.Add(interruptible(ctx, f), name)
}

// unwrapPath drops the *PathError wrapper, whose message repeats the name.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
