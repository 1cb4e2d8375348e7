package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/internal/percentiles"
	"github.com/metronome-load/metronome/internal/wholefile"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/dashboard"
	"github.com/metronome-load/metronome/output/hdrlog"
	"github.com/metronome-load/metronome/output/result"
	"github.com/metronome-load/metronome/summary"
)

// Merge is `metronome merge`'s input and settings.
type Merge struct {
	// Args are the command's arguments: result files (and directories of
	// them), or HdrHistogram logs ("-" for Stdin).
	Args           []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Set reports whether a flag was given on the command line: each
	// kind of input refuses the other's flags.
	Set func(flag string) bool

	// The flags of HdrHistogram logs.
	JSON, ByName bool
	Metrics      []string

	// The flags of result files.
	Thresholds                 []string
	SummaryExport, SummaryMode string
	Script                     string
	Report                     string
	Wait                       time.Duration
	NoColor                    bool
	StdoutTTY, StderrTTY       bool
	// Prepare checks the settings of a verdict and opens its log, once
	// the inputs are known to be result files.
	Prepare func() (*logsink.Sink, error)
	// LoadScript loads Script, with the log Prepare opened.
	LoadScript func(log *logsink.Sink) (engine.Script, error)
}

// LogFlags and VerdictFlags are the flags that belong to one kind of
// input: HdrHistogram logs, result files.
var (
	LogFlags     = []string{"json", "metric", "by-name"}
	VerdictFlags = []string{"threshold", "summary-export", "summary-mode", "script", "env", "report", "wait"}
)

// Run merges the arguments as what they are, decided once: result files
// into the verdict of the test their instances ran, HdrHistogram logs
// into one distribution per metric and scenario, and per request name.
func (m *Merge) Run(ctx context.Context) error {
	results, err := resultInputs(m.Args, m.Wait > 0)
	if err != nil {
		return err
	}
	if !results {
		if set := m.first(VerdictFlags); set != "" {
			return exitcode.Errorf(exitcode.InvalidConfig, "--%s applies to result files (-o result=FILE); %s is an HdrHistogram log", set, m.Args[0])
		}
		return m.logs(ctx)
	}
	if set := m.first(LogFlags); set != "" {
		return exitcode.Errorf(exitcode.InvalidConfig, "--%s applies to HdrHistogram logs, not to result files", set)
	}
	return m.verdict(ctx)
}

// first returns the first of flags set on the command line, "" if none.
func (m *Merge) first(flags []string) string {
	for _, f := range flags {
		if m.Set != nil && m.Set(f) {
			return f
		}
	}
	return ""
}

// resultInputs reports whether args are result files (and directories of
// them) rather than HdrHistogram logs; mixing both is an error. With wait,
// a file that does not exist yet is a result file to come.
func resultInputs(args []string, wait bool) (bool, error) {
	var results, logs []string
	for _, a := range args {
		if a == "-" {
			logs = append(logs, "standard input")
			continue
		}
		st, err := os.Stat(a)
		switch {
		case err != nil && wait && errors.Is(err, os.ErrNotExist):
			results = append(results, a)
		case err != nil:
			return false, exitcode.Errorf(exitcode.InvalidConfig, "cannot read %s: %v", a, PathCause(err))
		case !st.IsDir() && !st.Mode().IsRegular():
			// Opening a named pipe waits for a writer that may never
			// come: refused at once.
			f, err := result.OpenRegular(a)
			if err == nil {
				f.Close() // it became a regular file meanwhile
			}
			return false, exitcode.Errorf(exitcode.InvalidConfig, "%v", PathCause(err))
		case st.IsDir() || result.IsResultFile(a):
			results = append(results, a)
		default:
			logs = append(logs, a)
		}
	}
	if len(results) > 0 && len(logs) > 0 {
		return false, exitcode.Errorf(exitcode.InvalidConfig, "%s is a result file and %s an HdrHistogram log: merge one kind at a time", results[0], logs[0])
	}
	return len(results) > 0, nil
}

// logs merges HdrHistogram logs and prints their numbers.
func (m *Merge) logs(ctx context.Context) error {
	mg := hdrlog.NewMerger()
	for _, name := range m.Args {
		if err := m.addLog(ctx, mg, name); err != nil {
			if exitcode.Of(err) == exitcode.ExternalAbort {
				return err
			}
			return exitcode.Wrap(exitcode.InvalidConfig, err)
		}
	}
	for _, w := range mg.Warnings() {
		fmt.Fprintf(m.Stderr, "warning: %s\n", w)
	}
	var eps []percentiles.EndpointSummary
	if len(m.Metrics) == 0 {
		for _, e := range mg.Endpoints() {
			eps = append(eps, e.Summarize(percentiles.ByName))
		}
		percentiles.SortEndpoints(eps)
	}
	if m.ByName {
		if len(eps) == 0 {
			return fmt.Errorf("the logs hold no request names (logs written before metronome logged them per name, or requests without a name tag)")
		}
		if m.JSON {
			return percentiles.WriteEndpointJSON(m.Stdout, eps)
		}
		fmt.Fprintf(m.Stdout, "%d request name(s) from %d file(s); values in milliseconds\n\n", len(eps), len(m.Args))
		return percentiles.WriteEndpointTable(m.Stdout, eps, percentiles.ByName)
	}
	dists := mg.Distributions(m.Metrics...)
	if len(dists) == 0 {
		var found []string
		seen := map[string]bool{}
		for _, d := range mg.Distributions() {
			if !seen[d.Metric] {
				seen[d.Metric] = true
				found = append(found, d.Metric)
			}
		}
		return fmt.Errorf("no metric %s in the logs; they hold %s", strings.Join(m.Metrics, ", "), strings.Join(found, ", "))
	}
	sums := make([]percentiles.Summary, 0, len(dists))
	intervals := 0
	for _, d := range dists {
		if d.Dropped > 0 {
			fmt.Fprintf(m.Stderr, "warning: %d values of %s did not fit the merged histogram and were left out\n", d.Dropped, d.Tag)
		}
		intervals += d.Intervals
		sums = append(sums, d.Summarize(percentiles.Table))
	}
	if m.JSON {
		return percentiles.WriteJSON(m.Stdout, sums)
	}
	fmt.Fprintf(m.Stdout, "merged %d interval histograms from %d file(s); values in milliseconds\n\n", intervals, len(m.Args))
	if err := percentiles.WriteTable(m.Stdout, sums, percentiles.Table); err != nil {
		return err
	}
	if len(eps) == 0 {
		return nil
	}
	fmt.Fprintf(m.Stdout, "\nper request name: raw (the request's own time) vs corrected (corrected_latency), slowest corrected p99 first\n\n")
	return percentiles.WriteEndpointTable(m.Stdout, eps, percentiles.ByName)
}

func (m *Merge) addLog(ctx context.Context, mg *hdrlog.Merger, name string) error {
	if name == "-" {
		return mg.Add(Interruptible(ctx, m.Stdin), "standard input")
	}
	f, err := result.OpenRegular(name)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", name, PathCause(err))
	}
	defer f.Close()
	return mg.Add(Interruptible(ctx, f), name)
}

// verdict merges result files into the verdict of the whole test.
func (m *Merge) verdict(ctx context.Context) error {
	logs, err := m.Prepare()
	if err != nil {
		return err
	}
	defer logs.Close()
	extra, err := ParseThresholds(m.Thresholds)
	if err != nil {
		return err
	}
	fw := result.NewFollower(m.Args)
	files, err := fw.Await(ctx, m.Wait)
	if err != nil {
		return exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	cfg := engine.MergeConfig{
		Files: files, Open: fw.Open, Thresholds: extra,
		SummaryExport: m.SummaryExport, SummaryMode: m.SummaryMode, NoColor: m.NoColor,
		Stdout: m.Stdout, Stderr: m.Stderr, StdoutTTY: m.StdoutTTY, StderrTTY: m.StderrTTY, Log: logs,
	}
	if m.Script != "" {
		if cfg.Script, err = m.LoadScript(logs); err != nil {
			return err
		}
	}
	if m.Report != "" {
		ri := newReportIntervals()
		cfg.Visit = ri.add
		cfg.Report = func(in *summary.Input) error {
			return writeVerdictReport(m.Stdout, m.Report, ri.logReader(), files, in)
		}
	}
	return engine.Merge(ctx, cfg)
}

// writeVerdictReport writes the web dashboard's HTML report of the union:
// the latency charts from the files' intervals, the tables from the
// merged summary.
func writeVerdictReport(stdout io.Writer, out string, lr *dashboard.LogReader, files []*result.File, in *summary.Input) error {
	tl, err := lr.Timeline(0)
	if err != nil {
		return exitcode.Errorf(exitcode.InvalidConfig, "--report: %v", err)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	note := fmt.Sprintf("Report of the merged result files %s; intervals of %s.", strings.Join(names, ", "), tl.Period)
	p, err := dashboard.BuildPage(tl, in, false, note)
	if err != nil {
		return err
	}
	b, err := p.Render()
	if err != nil {
		return err
	}
	if err := wholefile.Write(out, b, 0o644); err != nil {
		return exitcode.Errorf(exitcode.Generic, "--report: cannot write %s: %v", out, err)
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes) from %d result file(s)\n", out, len(b), len(files))
	return nil
}

// reportIntervals are the latency histograms of the files' intervals
// for --report, as an HdrHistogram log of the same run holds them: one
// per series of the log (metric, scenario, name, outcome) and second of
// the test, the instances' intervals of the same second merged, so that
// they cost what one file's do however many files there are.
type reportIntervals struct {
	hists map[reportKey]*hdrhistogram.PackedHistogram
	order []reportKey
}

type reportKey struct {
	series     hdrlog.Series
	start, end time.Time
}

func newReportIntervals() *reportIntervals {
	return &reportIntervals{hists: map[reportKey]*hdrhistogram.PackedHistogram{}}
}

// add takes a delta of a time trend; others are not charted.
func (ri *reportIntervals) add(d *result.Delta) {
	if d.Series.Type != metrics.Trend || d.Series.Metric.Contains != metrics.Time.String() || d.Pos == nil {
		return
	}
	m := d.Series.Metric
	s := hdrlog.Series{Metric: m.Name}
	s.Scenario, _ = d.Series.Tags.Get("scenario")
	if hdrlog.PerName(m.Name) {
		s.Name, _ = d.Series.Tags.Get("name")
	}
	if m.Name == metrics.CorrectedLatencyName {
		s.Outcome, _ = d.Series.Tags.Get("outcome")
	}
	start := d.Start.Truncate(time.Second)
	k := reportKey{s, start, start.Add(d.End.Sub(d.Start))}
	if h := ri.hists[k]; h != nil {
		h.Merge(d.Pos)
		return
	}
	// Trend units are microseconds for time metrics, as in the log.
	ri.hists[k] = d.Pos
	ri.order = append(ri.order, k)
}

// logReader is the intervals as the report reads a log's.
func (ri *reportIntervals) logReader() *dashboard.LogReader {
	var lr dashboard.LogReader
	for _, k := range ri.order {
		lr.AddInterval(k.series, k.start, k.end, ri.hists[k])
	}
	return &lr
}
