package cli

import (
	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/internal/compare"
	"github.com/metronome-load/metronome/internal/tool"
)

func init() { addCommand(newCompareCmd) }

// newCompareCmd declares `metronome compare BASE NEW` (tool.Compare): is
// NEW slower than BASE, beyond a tolerance and beyond the runs' own noise?
func newCompareCmd(g *globals) *cobra.Command {
	o := compare.DefaultOptions
	var (
		asJSON bool
		html   string
	)
	cmd := &cobra.Command{
		Use:   "compare [flags] BASE NEW",
		Short: "Judge whether a run is slower than a baseline run, beyond its noise",
		Long: `Compare reads two runs' HdrHistogram interval logs (-o hdrlog=FILE) or result
files (-o result=FILE) and compares their latency percentiles: p50, p90, p99
and p99.9 of the requests' raw duration and of corrected_latency, for all
samples, each scenario (when there are several) and each request name, with
the new run's difference from the base and a confidence interval for it.

The interval comes from a bootstrap over both runs' intervals of time (the
logs' 1 s intervals): it draws pairs of runs from the pooled intervals, in
blocks, as if one server had produced both, and says how far apart two such
runs can be. One row is judged: by default corrected_latency's p99 over all
samples. It is a regression when the new run is worse by more than
--tolerance percent AND its interval lies wholly above zero; compare then
exits with 99, otherwise with 0. An unreadable file or a bad flag exits with
104.`,
		Example: `  metronome compare base.hlog new.hlog
  metronome compare --metric raw --percentile 99.9 base.hlog new.hlog
  metronome compare --tags name=login --json base.hlog new.hlog
  metronome compare --html compare.html base.hlog new.hlog`,
		Args:          cobra.ExactArgs(2),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, _, stop := g.signalContext(cmd.Context(), readSignals)
			defer stop()
			c := tool.Compare{Base: args[0], New: args[1], Options: o, JSON: asJSON, HTML: html, Stdout: g.stdout, Stderr: g.stderr}
			return c.Run(ctx)
		},
	}
	cmd.SetOut(g.stdout)
	cmd.SetErr(g.stderr)
	f := cmd.Flags()
	f.StringVar(&o.Metric, "metric", o.Metric, "the judged metric: corrected (corrected_latency), raw (the requests' own duration) or a trend's name")
	f.StringVar(&o.Tags, "tags", o.Tags, "the judged tag set: scenario=NAME or name=NAME (default: all samples)")
	f.Float64Var(&o.Percentile, "percentile", o.Percentile, "the judged percentile")
	f.Float64Var(&o.Tolerance, "tolerance", o.Tolerance, "how much worse the judged percentile may be, in percent of the base's")
	f.Float64Var(&o.Confidence, "confidence", o.Confidence, "the intervals' confidence, in percent")
	f.IntVar(&o.Resamples, "resamples", o.Resamples, "the bootstrap's number of resamples")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "the bootstrap's random seed (the same seed gives the same intervals)")
	f.BoolVar(&asJSON, "json", false, "print JSON (values in milliseconds) instead of text")
	f.StringVar(&html, "html", "", "also write an HTML page with both runs' percentile spectra overlaid to this file")
	return cmd
}
