package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/health"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/result"
	"github.com/metronome-load/metronome/summary"
)

// MergeConfig is one merge of the result files of a test's instances
// (`metronome merge` of files written with -o result=FILE).
type MergeConfig struct {
	// Files are the result files as a look at them found them (a
	// result.Tail): their headers, metric definitions and ends, without
	// their numbers.
	Files []*result.File
	// Open opens one of Files for reading its numbers, as far as the look
	// read it. Merge reads the files one at a time and folds each into
	// the union before the next, so that it holds one file's totals at
	// once whatever their number.
	Open func(*result.File) (io.ReadCloser, error)
	// Visit, when set, gets every delta of every file as it is read (the
	// HTML report's intervals).
	Visit func(*result.Delta)
	// Thresholds are evaluated besides those the files recorded, keyed
	// as in options.thresholds; with noThresholds recorded, only they are.
	Thresholds map[string][]metrics.ThresholdDef
	// Script, when set, is the test's script: its handleSummary gets the
	// merged summary. It is configured with the recorded options.
	Script Script
	// Report, when set, gets the merged summary before it is printed
	// (the HTML report).
	Report func(*summary.Input) error
	// SummaryExport, SummaryMode, NoColor, Stdout, Stderr, StdoutTTY,
	// StderrTTY and Log are as in Config.
	SummaryExport, SummaryMode string
	NoColor                    bool
	Stdout, Stderr             io.Writer
	StdoutTTY, StderrTTY       bool
	Log                        *logsink.Sink
}

// Merge gives the verdict of a test that ran as several instances: it
// checks that the files are one test's and cover it (result.Union), reads
// every series of every file into one metrics engine, a file at a time,
// exactly as a single run aggregates its samples, evaluates the recorded
// thresholds and
// cfg.Thresholds on it, and writes the summary as a run does
// (--summary-export, handleSummary or the text summary). The error carries
// the exit code: 104 for files that cannot be merged or a bad threshold,
// 99 when a threshold is crossed, 105 when a file was cut short (its
// runner was killed; what it holds is merged and the summary says so),
// and otherwise the exit code of a run that ended early (a signal, 105;
// exec.test.abort(), 108), which its file's end line records.
func Merge(ctx context.Context, cfg MergeConfig) error {
	if cfg.Log == nil {
		cfg.Log = logsink.NewText(cfg.Stderr)
	}
	logf := func(format string, args ...any) { cfg.Log.Logf(logsink.Warn, format, args...) }
	files, err := result.Union(cfg.Files)
	if err != nil {
		return exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	first := files[0]
	opts, err := recordedOptions(first)
	if err != nil {
		return err
	}
	cfgs, err := config.Scenarios(opts)
	if err != nil {
		return exitcode.Errorf(exitcode.InvalidConfig, "%s: the scenarios it recorded cannot be read: %v", first.Name, err)
	}

	reg := metrics.NewRegistry()
	builtin := metrics.RegisterBuiltin(reg)
	for _, f := range files {
		for _, d := range f.Metrics {
			t, _ := metrics.ParseType(d.Type) // result.Read checked it
			if _, err := reg.New(d.Name, t, metrics.ParseValueType(d.Contains)); err != nil {
				return exitcode.Errorf(exitcode.InvalidConfig, "%s: %v", f.Name, err)
			}
		}
	}
	if cfg.Script != nil {
		// The script's init context defines its metrics again, as in
		// the run; handleSummary runs in a VU made with these options.
		if err := cfg.Script.Configure(opts, reg, builtin, nil); err != nil {
			return err
		}
	}
	// A latency trend no file defines recorded nothing: there is no
	// submetric of it to make.
	opts.LatencyTrends = slices.DeleteFunc(opts.LatencyTrends, func(name string) bool { return reg.Get(name) == nil })
	addThresholds(opts, cfg.Thresholds)
	defs := ThresholdDefs(opts)
	notes := wholeRunWindows(defs)
	eng, err := metrics.NewEngine(reg, engineOptions(defs, systemTagSet(opts), cfgs, opts.LatencyTrends))
	if err != nil && truncated(files) > 0 {
		// A file cut short before its runner defined the metrics its
		// thresholds name: the cut is the news, not the threshold.
		var cut []string
		for _, f := range files {
			if f.Truncated != "" {
				cut = append(cut, f.Truncated)
			}
		}
		return exitcode.Errorf(exitcode.ExternalAbort, "%s; so the thresholds cannot be evaluated: %v", strings.Join(cut, "; "), err)
	}
	if err != nil {
		return exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	if err := ingestFiles(eng, reg, files, cfg.Open, cfg.Visit); err != nil {
		return exitcode.Wrap(exitcode.InvalidConfig, err)
	}

	var elapsed time.Duration
	var setupData json.RawMessage
	accounts := map[string]*scenarioAccount{}
	var tally health.Tally
	var stopped error // the first file's run that ended early, with its exit code
	for _, f := range files {
		if f.Truncated != "" {
			notes = append(notes, f.Truncated)
			elapsed = max(elapsed, f.Last.Sub(f.Header.Started))
			continue
		}
		e := f.End
		if st := e.Stopped; st != nil {
			note := fmt.Sprintf("%s: its run stopped before its end (exit %d): %s", f.Name, st.Code, st.Error)
			notes = append(notes, note)
			if stopped == nil {
				code := st.Code
				if code <= exitcode.ThresholdsFailed || code > exitcode.Generic {
					code = exitcode.ExternalAbort // not a code a run gives for an early stop
				}
				stopped = exitcode.Errorf(code, "%s", note)
			}
		}
		if e.Dropped > 0 {
			notes = append(notes, fmt.Sprintf("%s: its runner dropped %d samples it could not write in time; the merge lacks them", f.Name, e.Dropped))
		}
		if e.Folded > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d samples were recorded past its series cap under their metric and scenario only (%s); submetrics that select other tags miss them",
				f.Name, e.Folded, result.EnvMaxSeries))
		}
		if d, err := time.ParseDuration(e.Elapsed); err == nil {
			elapsed = max(elapsed, d)
		}
		if setupData == nil && len(e.SetupData) > 0 {
			setupData = e.SetupData
		}
		for _, sc := range e.Scenarios {
			addAccount(accounts, cfgs, sc)
		}
		if e.Health != nil {
			tally.Merge(e.Health.Tally())
		}
	}
	report := eng.EvaluateThresholds(elapsed, true)
	src := summarySource{
		engine: eng, opts: opts, mode: cfg.SummaryMode,
		noColor: cfg.NoColor || !cfg.StdoutTTY, stdoutTTY: cfg.StdoutTTY, stderrTTY: cfg.StderrTTY,
	}
	for _, c := range cfgs {
		if a := accounts[c.Base().Name]; a != nil {
			src.scenarios = append(src.scenarios, *a)
		}
	}
	if tally.Intervals > 0 {
		src.health = &tally
	}
	in := src.input(cfgs, elapsed, setupData, report)
	in.Warnings = append(in.Warnings, notes...)
	for _, n := range notes {
		logf("%s", n)
	}
	if cfg.Report != nil {
		if err := cfg.Report(in); err != nil {
			return err
		}
	}
	w := summaryWriter{
		mode: cfg.SummaryMode, export: cfg.SummaryExport, stdout: cfg.Stdout, stderr: cfg.Stderr,
		timeout: optDuration(opts.HandleSummaryTimeout, 120*time.Second), logf: logf,
	}
	if cfg.Script != nil && cfg.Script.Capabilities().HandleSummary {
		w.handle = cfg.Script.HandleSummary
	}
	sumErr := w.write(ctx, in)
	switch {
	case sumErr != nil:
		return sumErr
	case truncated(files) > 0:
		return exitcode.Errorf(exitcode.ExternalAbort, "the verdict covers only what the files hold: %d of them have no end line (a runner killed, or still running)", truncated(files))
	case report.Failed():
		return crossed(report)
	}
	return stopped
}

// wholeRunWindows turns the windowed thresholds of defs into thresholds on
// the whole run, and says so: the merge reads each file's totals, not the
// steps its windows are made of.
func wholeRunWindows(defs map[string][]metrics.ThresholdDef) []string {
	var notes []string
	for _, key := range slices.Sorted(maps.Keys(defs)) {
		for i, d := range defs[key] {
			if d.Window == 0 {
				continue
			}
			notes = append(notes, fmt.Sprintf("thresholds.%s: %q is judged on the whole merged run, not on each %s window: a merge reads each file's totals",
				key, d.Source, d.Window))
			defs[key][i].Window = 0
		}
	}
	return notes
}

// recordedOptions reads the options a file recorded, for the whole test:
// without its execution segment and sequence.
func recordedOptions(f *result.File) (*config.Options, error) {
	opts, err := config.Parse(f.Header.Options, "the options recorded in "+f.Name)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	opts.ExecutionSegment, opts.ExecutionSegmentSequence = nil, nil
	if opts.SystemTags == nil {
		opts.SystemTags = config.DefaultSystemTags
	}
	return opts, nil
}

// addThresholds adds the thresholds given at merge time to the recorded
// ones, so that the summary shows them as the script's. With noThresholds
// recorded, only they are evaluated.
func addThresholds(opts *config.Options, extra map[string][]metrics.ThresholdDef) {
	if len(extra) == 0 {
		return
	}
	if isTrue(opts.NoThresholds) {
		opts.NoThresholds, opts.Thresholds = nil, nil
	}
	if opts.Thresholds == nil {
		opts.Thresholds = map[string][]config.Threshold{}
	}
	for k, defs := range extra {
		for _, d := range defs {
			opts.Thresholds[k] = append(opts.Thresholds[k], config.Threshold{Source: d.Source, AbortOnFail: d.AbortOnFail})
		}
	}
}

// instanceGauges are the gauges each instance keeps of its own share of
// the test (the VUs it runs): the union's value is their sum, where a
// gauge of something the instances share (a queue's length read from the
// service) keeps the latest value.
var instanceGauges = []string{metrics.VUsName, metrics.VUsMaxName}

// ingestFiles reads the numbers of files, one at a time, and merges each
// file's series into eng before the next is read. The series of the
// instanceGauges are summed over the files: each file's last value,
// least and greatest are added up. A metric's counts that overflow over
// the files are refused, naming the file and line that overflows.
func ingestFiles(eng *metrics.Engine, reg *metrics.Registry, files []*result.File,
	open func(*result.File) (io.ReadCloser, error), visit func(*result.Delta)) error {
	summed := map[string]*metrics.GaugeSink{}
	counts := map[string]int64{}
	for _, f := range files {
		r, err := open(f)
		if err != nil {
			return fmt.Errorf("cannot read %s: %w", f.Name, err)
		}
		var tot result.Totals
		var overflow error
		_, err = result.Scan(r, f.Name, func(d *result.Delta) {
			name := d.Series.Metric.Name
			if overflow == nil && counts[name] > math.MaxInt64-d.N {
				overflow = fmt.Errorf("%s: line %d: the counts of %s overflow over the files merged", f.Name, d.Line, name)
			}
			counts[name] += d.N
			tot.Add(d)
			if visit != nil {
				visit(d)
			}
		})
		r.Close()
		if err == nil {
			err = overflow
		}
		if err != nil {
			return err
		}
		own := map[string]*metrics.GaugeSink{}
		for _, s := range tot.Series() {
			m := reg.Get(s.Metric.Name)
			if m == nil {
				continue
			}
			if g, ok := s.Sink.(*metrics.GaugeSink); ok && slices.Contains(instanceGauges, m.Name) {
				if own[m.Name] == nil {
					own[m.Name] = &metrics.GaugeSink{}
				}
				metrics.MergeSink(own[m.Name], g)
				continue
			}
			eng.IngestSink(m, s.Tags, s.Sink)
		}
		for name, g := range own {
			if !g.Set {
				continue
			}
			sum := summed[name]
			if sum == nil {
				summed[name] = g
				continue
			}
			sum.Value += g.Value
			sum.Min += g.Min
			sum.Max += g.Max
			if g.Last.After(sum.Last) {
				sum.Last = g.Last
			}
		}
	}
	for _, name := range instanceGauges {
		if g := summed[name]; g != nil {
			eng.IngestSink(reg.Get(name), metrics.EmptyTags, g)
		}
	}
	return nil
}

// addAccount adds a file's account of a scenario to the union's.
func addAccount(accounts map[string]*scenarioAccount, cfgs []executor.Config, sc result.ScenarioEnd) {
	i := slices.IndexFunc(cfgs, func(c executor.Config) bool { return c.Base().Name == sc.Name })
	if i < 0 {
		return
	}
	a := accounts[sc.Name]
	if a == nil {
		a = &scenarioAccount{cfg: cfgs[i], can: executor.Ask(cfgs[i], nil)}
		if a.can.Closed != nil && sc.BackFill != nil {
			a.backFill.Interval = a.can.Closed.BackFillInterval()
		}
		accounts[sc.Name] = a
	}
	if o := sc.Open; o != nil {
		if a.open == nil {
			a.open = &executor.Account{}
		}
		a.open.Intended += o.Intended
		a.open.OnTime += o.OnTime
		a.open.Late += o.Late
		a.open.LateForVU += o.LateForVU
		a.open.Completed += o.Completed
		a.open.Interrupted += o.Interrupted
		a.open.Dropped += o.Dropped
		// The instances' backlogs peak at about the same moments of the
		// same schedule: their sum bounds the union's peak from above.
		a.open.PeakBacklog += o.PeakBacklog
	}
	if b := sc.BackFill; b != nil {
		a.backFill.Requests += b.Requests
		a.backFill.Backfilled += b.Backfilled
		a.backFill.Unestimated += b.Unestimated
		for _, e := range b.Estimates {
			a.backFill.Estimates = append(a.backFill.Estimates, time.Duration(e))
		}
		slices.Sort(a.backFill.Estimates)
	}
}

// truncated counts the files that were cut short.
func truncated(files []*result.File) int {
	n := 0
	for _, f := range files {
		if f.Truncated != "" {
			n++
		}
	}
	return n
}
