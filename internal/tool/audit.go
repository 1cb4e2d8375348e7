package tool

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/audit"
	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/wholefile"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/dashboard"
	"github.com/metronome-load/metronome/summary"
)

// Audit is `metronome audit`'s input and settings: k6's JSON output of a
// stock k6 run (Output) and the run's script or archive (Script).
type Audit struct {
	Output, Script string
	// JSON prints the rows as JSON; Thresholds are --threshold's values;
	// Bound is --over; LogPath and ReportPath the files to write ("" for
	// none).
	JSON                bool
	Thresholds          []string
	Bound               time.Duration
	LogPath, ReportPath string
	NoColor             bool
	// Env is the process environment, for the log's K6_HDRLOG_* settings.
	Env            map[string]string
	Stdout, Stderr io.Writer
	// Options loads the script (or archive) with the run's flags and
	// returns its consolidated options and scenarios.
	Options func(script string) (*config.Options, []executor.Config, error)
}

// Run audits the output and prints what metronome would have measured:
// exit 99 when a threshold is crossed on the audited data, 104 for an
// input that cannot be audited, 105 when a signal stopped the reading.
func (c *Audit) Run(ctx context.Context) error {
	outputPath, scriptPath := c.Output, c.Script
	if looksLikeOutput(scriptPath) {
		return exitcode.Errorf(exitcode.InvalidConfig, "audit: %s looks like k6's JSON output, not a script: give the output first, then the script (or archive)", scriptPath)
	}
	if c.Bound <= 0 {
		return exitcode.Errorf(exitcode.InvalidConfig, "--over: must be a positive duration, got %s", c.Bound)
	}
	opts, cfgs, err := c.Options(scriptPath)
	if err != nil {
		return err
	}
	defs := engine.ThresholdDefs(opts)
	noThresholds := opts.NoThresholds != nil && *opts.NoThresholds
	extra, err := ParseThresholds(c.legacyThresholds())
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
		return exitcode.Errorf(exitcode.InvalidConfig, "audit: cannot read %s: %v", outputPath, PathCause(err))
	}
	defer f.Close()
	o := audit.Options{
		Scenarios: cfgs, Thresholds: defs, Bound: c.Bound, LatencyTrends: opts.LatencyTrends,
		Summary: summary.Options{TrendStats: opts.SummaryTrendStats, Mode: "compact", NoColor: c.NoColor},
		Log:     c.LogPath != "" || c.ReportPath != "",
		LogEnv:  c.Env,
		Logf:    func(format string, args ...any) { fmt.Fprintf(c.Stderr, "warning: "+format+"\n", args...) },
	}
	if opts.SummaryTimeUnit != nil {
		o.Summary.TimeUnit = *opts.SummaryTimeUnit
	}
	if opts.MinIterationDuration != nil {
		o.MinIterationDuration = opts.MinIterationDuration.Std()
	}
	res, err := audit.Audit(Interruptible(ctx, f), outputPath, o)
	if ctx.Err() != nil {
		return exitcode.Errorf(exitcode.ExternalAbort, "audit: interrupted by signal while reading %s; nothing was written", outputPath)
	}
	if err != nil {
		return exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	if c.JSON {
		for _, s := range res.Skipped() {
			fmt.Fprintf(c.Stderr, "warning: skipped %s\n", s)
		}
		if res.Folded != "" {
			fmt.Fprintf(c.Stderr, "note: %s are in the rows labelled folded=true\n", res.Folded)
		}
		err = res.WriteJSON(c.Stdout)
	} else {
		err = res.WriteText(c.Stdout)
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
func (c *Audit) legacyThresholds() []string {
	out := make([]string, len(c.Thresholds))
	for i, t := range c.Thresholds {
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
		fmt.Fprintf(c.Stderr, "warning: --threshold %q: METRIC=EXPRESSION is deprecated and will be refused in the next release; write %q, as merge and watch take it\n", t, out[i])
	}
	return out
}

// writeFiles writes the log and the report the flags ask for.
func (c *Audit) writeFiles(res *audit.Result) error {
	if c.LogPath == "" && c.ReportPath == "" {
		return nil
	}
	var log bytes.Buffer
	if err := res.WriteLog(&log); err != nil {
		return exitcode.Errorf(exitcode.Generic, "audit: writing the HdrHistogram log: %v", err)
	}
	if c.LogPath != "" {
		if err := wholefile.Write(c.LogPath, log.Bytes(), 0o644); err != nil {
			return exitcode.Errorf(exitcode.Generic, "audit: cannot write %s: %v", c.LogPath, PathCause(err))
		}
		fmt.Fprintf(c.Stderr, "wrote %s (HdrHistogram log, %d bytes)\n", c.LogPath, log.Len())
	}
	if c.ReportPath == "" {
		return nil
	}
	var lr dashboard.LogReader
	if err := lr.Add(&log, res.Source); err != nil {
		return exitcode.Errorf(exitcode.Generic, "audit: reading back the HdrHistogram log: %v", err)
	}
	n, err := WriteReport(c.Stdout, c.Stderr, &lr, 0, c.ReportPath, func(period time.Duration) string {
		return fmt.Sprintf("Audit of the stock k6 run recorded in %s; intervals of %s. corrected_latency and schedule_lag are %s.",
			res.Source, period, audit.Reconstructed)
	})
	if err != nil || c.ReportPath == "-" {
		return err
	}
	fmt.Fprintf(c.Stderr, "wrote %s (HTML report, %d bytes)\n", c.ReportPath, n)
	return nil
}

// looksLikeOutput reports whether a path is named as k6's JSON output is.
func looksLikeOutput(path string) bool {
	p := strings.ToLower(path)
	return strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".json.gz") || strings.HasSuffix(p, ".gz")
}
