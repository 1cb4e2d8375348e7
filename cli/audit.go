package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/audit"
	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/tool"
	"github.com/metronome-load/metronome/internal/wholefile"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/dashboard"
	"github.com/metronome-load/metronome/summary"
)

func init() { addCommand(newAuditCmd) }

// auditCmd holds the flags of `metronome audit`.
type auditCmd struct {
	run        *runCmd
	asJSON     bool
	thresholds []string
	bound      time.Duration
	logPath    string
	reportPath string
}

// newAuditCmd builds `metronome audit`: what metronome would have measured
// in a run made with stock k6, rebuilt from k6's JSON output and the
// script's options.
func newAuditCmd(g *globals) *cobra.Command {
	c := &auditCmd{run: &runCmd{g: g, tier: &config.Options{Source: "command-line flags"}}}
	cmd := &cobra.Command{
		Use:   "audit [flags] k6-output.json[.gz] script.js|archive.tar",
		Short: "Rebuild omission-free latency from the JSON output of a run made with stock k6",
		Long: `Audit reads the JSON output of a run made with stock k6 (k6 run -o json=FILE, plain
or gzipped) and the options of its script (or archive), and rebuilds what
metronome would have measured in that run: corrected_latency for every request
and schedule_lag for every iteration. Arrival-rate scenarios are rebuilt from
their schedule (each request is charged its iteration's lag, each dropped
iteration the wait until a VU was free); closed-model scenarios are back-filled
per request from each VU's cadence. Everything rebuilt is labelled as such.

It prints the summary metronome would have printed, how each scenario was
rebuilt, and k6's own figures beside the audited ones per scenario and per
request name (--json prints those rows in the shape of metronome merge
--json). --hdrlog writes the audited run's HdrHistogram log, which metronome
merge and report read, and --report its HTML report. Thresholds, the
script's and those of --threshold, are evaluated on the audited data; when
one fails the exit code is 99, as k6's.

Pass the flags and -e variables the run was made with, so the options are the
run's. k6's vu and iter metadata (--system-tags with vu and iter, besides
scenario and name) make the audit exact; docs/stock-k6.md says what is
estimated without them.`,
		Example: `  k6 run --system-tags=scenario,name,method,status,vu,iter -o json=run.json.gz script.js
  metronome audit run.json.gz script.js
  metronome audit --threshold 'corrected_latency: p(99)<250' --report audit.html run.json.gz script.js`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return exitcode.Errorf(exitcode.InvalidConfig, "audit needs k6's JSON output and the script (or archive) of the run, in that order; got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, signalled, stop := g.signalContext(cmd.Context(), readSignals)
			defer stop()
			err := c.audit(ctx, args[0], args[1])
			if signalled() && exitcode.Of(err) != exitcode.ExternalAbort {
				// It came after the input was read: the files were
				// finished.
				err = exitcode.Errorf(exitcode.ExternalAbort, "audit: interrupted by signal; the files asked for were written whole")
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.BoolVar(&c.asJSON, "json", false, "print the rows of k6's and the audited figures as JSON (the shape of metronome merge --json) instead of text")
	fs.StringArrayVar(&c.thresholds, "threshold", nil, "a threshold evaluated on the audited data, 'METRIC[{tag:value}]: EXPRESSION', e.g. 'corrected_latency: p(99)<250' (repeatable)")
	fs.DurationVar(&c.bound, "over", audit.DefaultBound, "the latency above which the tables count requests")
	fs.StringVar(&c.logPath, "hdrlog", "", "write the audited run's HdrHistogram interval log to this file (for metronome merge, compare and report)")
	fs.StringVar(&c.reportPath, "report", "", "write the audited run's HTML report to this file")
	addOptionFlags(fs, c.run.tier)
	fs.StringArrayVarP(&c.run.env, "env", "e", nil, "an environment variable for the script, NAME=VALUE (repeatable), as the run had it")
	fs.StringVarP(&c.run.configPath, "config", "c", "", "JSON config file holding options (env K6_CONFIG)")
	fs.BoolVar(&c.run.includeSysEnv, "include-system-env-vars", true, "pass the process environment to the script's __ENV")
	return cmd
}

func (c *auditCmd) audit(ctx context.Context, outputPath, scriptPath string) error {
	g := c.run.g
	if looksLikeOutput(scriptPath) {
		return exitcode.Errorf(exitcode.InvalidConfig, "audit: %s looks like k6's JSON output, not a script: give the output first, then the script (or archive)", scriptPath)
	}
	if c.bound <= 0 {
		return exitcode.Errorf(exitcode.InvalidConfig, "--over: must be a positive duration, got %s", c.bound)
	}
	opts, cfgs, err := c.options(scriptPath)
	if err != nil {
		return err
	}
	defs := engine.ThresholdDefs(opts)
	noThresholds := opts.NoThresholds != nil && *opts.NoThresholds
	extra, err := tool.ParseThresholds(c.legacyThresholds())
	if err != nil {
		return err
	}
	for name, ts := range extra {
		if defs == nil {
			defs = map[string][]metrics.ThresholdDef{}
		}
		defs[name] = append(defs[name], ts...)
	}
	f, err := os.Open(outputPath)
	if err != nil {
		return exitcode.Errorf(exitcode.InvalidConfig, "audit: cannot read %s: %v", outputPath, tool.PathCause(err))
	}
	defer f.Close()
	o := audit.Options{
		Scenarios: cfgs, Thresholds: defs, Bound: c.bound, LatencyTrends: opts.LatencyTrends,
		Summary: summary.Options{TrendStats: opts.SummaryTrendStats, Mode: "compact", NoColor: g.noColor || !isTTY(g.stdout)},
		Log:     c.logPath != "" || c.reportPath != "",
		LogEnv:  g.env,
		Logf:    func(format string, args ...any) { fmt.Fprintf(g.stderr, "warning: "+format+"\n", args...) },
	}
	if opts.SummaryTimeUnit != nil {
		o.Summary.TimeUnit = *opts.SummaryTimeUnit
	}
	if opts.MinIterationDuration != nil {
		o.MinIterationDuration = opts.MinIterationDuration.Std()
	}
	res, err := audit.Audit(tool.Interruptible(ctx, f), outputPath, o)
	if ctx.Err() != nil {
		return exitcode.Errorf(exitcode.ExternalAbort, "audit: interrupted by signal while reading %s; nothing was written", outputPath)
	}
	if err != nil {
		return exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	if c.asJSON {
		for _, s := range res.Skipped() {
			fmt.Fprintf(g.stderr, "warning: skipped %s\n", s)
		}
		if res.Folded != "" {
			fmt.Fprintf(g.stderr, "note: %s are in the rows labelled folded=true\n", res.Folded)
		}
		err = res.WriteJSON(g.stdout)
	} else {
		err = res.WriteText(g.stdout)
	}
	if err != nil {
		return err
	}
	if err := c.writeFiles(res); err != nil {
		return err
	}
	if !noThresholds && res.Failed() {
		return exitcode.Errorf(exitcode.ThresholdsFailed, "thresholds on metrics '%s' have been crossed on the audited data",
			strings.Join(res.Report.FailedMetrics(), "', '"))
	}
	return nil
}

// legacyThresholds returns the --threshold values in the form merge and
// watch take, METRIC[{tag:value}]: EXPRESSION, rewriting each in the form
// audit took before, METRIC=EXPRESSION, with a warning: that form is
// deprecated and goes in the next release.
func (c *auditCmd) legacyThresholds() []string {
	out := make([]string, len(c.thresholds))
	for i, t := range c.thresholds {
		out[i] = t
		// The metric ends at its tag filter's closing brace, if any; a
		// colon after it is the shared form's separator.
		at := strings.IndexByte(t, '}') + 1
		if strings.IndexByte(t[at:], ':') >= 0 {
			continue
		}
		eq := strings.IndexByte(t[at:], '=')
		if eq < 0 {
			continue
		}
		out[i] = t[:at+eq] + ": " + t[at+eq+1:]
		fmt.Fprintf(c.run.g.stderr, "warning: --threshold %q: METRIC=EXPRESSION is deprecated and will be refused in the next release; write %q, as merge and watch take it\n", t, out[i])
	}
	return out
}

// options loads the script (or archive) as inspect does and returns the
// run's consolidated options and scenarios.
func (c *auditCmd) options(path string) (*config.Options, []executor.Config, error) {
	r := c.run
	t, err := r.readTiers()
	if err != nil {
		return nil, nil, err
	}
	scriptEnv, _, err := r.scriptEnv(r.includeSysEnv)
	if err != nil {
		return nil, nil, err
	}
	lo := loadOptions{Env: scriptEnv, Stderr: r.g.stderr, Verbose: r.g.verbose}
	arch, path, err := r.fromArchive(path, &lo)
	if err != nil {
		return nil, nil, err
	}
	script, opts, err := r.loadConsolidated(t, path, arch, lo, loadScript)
	if err != nil {
		return nil, nil, err
	}
	if opts.ExecutionSegment != nil {
		return nil, nil, exitcode.Errorf(exitcode.InvalidConfig, "--execution-segment: audit rebuilds whole runs, not one instance's part of a segmented one")
	}
	cfgs, err := engine.Scenarios(opts, script)
	if err != nil {
		return nil, nil, err
	}
	return opts, cfgs, nil
}

// writeFiles writes the log and the report the flags ask for.
func (c *auditCmd) writeFiles(res *audit.Result) error {
	g := c.run.g
	if c.logPath == "" && c.reportPath == "" {
		return nil
	}
	var log bytes.Buffer
	if err := res.WriteLog(&log); err != nil {
		return exitcode.Errorf(exitcode.Generic, "audit: writing the HdrHistogram log: %v", err)
	}
	if c.logPath != "" {
		if err := wholefile.Write(c.logPath, log.Bytes(), 0o644); err != nil {
			return exitcode.Errorf(exitcode.Generic, "audit: cannot write %s: %v", c.logPath, tool.PathCause(err))
		}
		fmt.Fprintf(g.stderr, "wrote %s (HdrHistogram log, %d bytes)\n", c.logPath, log.Len())
	}
	if c.reportPath == "" {
		return nil
	}
	var lr dashboard.LogReader
	if err := lr.Add(&log, res.Source); err != nil {
		return exitcode.Errorf(exitcode.Generic, "audit: reading back the HdrHistogram log: %v", err)
	}
	n, err := writeReport(g.stdout, g.stderr, &lr, 0, c.reportPath, func(period time.Duration) string {
		return fmt.Sprintf("Audit of the stock k6 run recorded in %s; intervals of %s. corrected_latency and schedule_lag are %s.",
			res.Source, period, audit.Reconstructed)
	})
	if err != nil || c.reportPath == "-" {
		return err
	}
	fmt.Fprintf(g.stderr, "wrote %s (HTML report, %d bytes)\n", c.reportPath, n)
	return nil
}

// looksLikeOutput reports whether a path is named as k6's JSON output is.
func looksLikeOutput(path string) bool {
	p := strings.ToLower(path)
	return strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".json.gz") || strings.HasSuffix(p, ".gz")
}
