package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/wholefile"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output/dashboard"
	"github.com/metronome-load/metronome/output/hdrlog"
	"github.com/metronome-load/metronome/output/result"
	"github.com/metronome-load/metronome/summary"
)

// verdictHelp is merge's help for result files.
const verdictHelp = `

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
summary says so, and merge exits 105. A DIR argument stands for the result
files in it; --wait waits for the files to be complete (k6-operator's
runners write them while the merge Job already runs).`

// verdictFlags are merge's flags for result files.
type verdictFlags struct {
	thresholds    []string
	summaryExport string
	summaryMode   string
	script        string
	env           []string
	report        string
	wait          time.Duration
}

// hdrlogFlags and verdictOnly are the flags that belong to one kind of
// input.
var (
	hdrlogFlags = []string{"json", "metric", "by-name"}
	verdictOnly = []string{"threshold", "summary-export", "summary-mode", "script", "env", "report", "wait"}
)

// addVerdict gives `metronome merge` its result-file mode.
func addVerdict(cmd *cobra.Command, g *globals) {
	v := &verdictFlags{}
	cmd.Short = "Merge HdrHistogram logs, or the result files of a test's instances into one verdict"
	cmd.Long += verdictHelp
	cmd.Example += `
  metronome merge /results/*.result --summary-export summary.json
  metronome merge --wait 15m --script test.js --report report.html /results/
  metronome merge --threshold 'corrected_latency{name:login}: p(99)<500' a.result b.result`
	fs := cmd.Flags()
	fs.StringArrayVar(&v.thresholds, "threshold", nil, "result files: another threshold, 'METRIC[{tag:value}]: EXPRESSION', e.g. 'corrected_latency: p(99)<500' (repeatable)")
	fs.StringVar(&v.summaryExport, "summary-export", "", "result files: write the merged summary as JSON to this file")
	fs.StringVar(&v.summaryMode, "summary-mode", "compact", "result files: compact, full or disabled")
	fs.StringVar(&v.script, "script", "", "result files: the test's script (or archive), whose handleSummary gets the merged summary")
	fs.StringArrayVarP(&v.env, "env", "e", nil, "result files: an environment variable for --script, NAME=VALUE (repeatable)")
	fs.StringVar(&v.report, "report", "", "result files: write the HTML report of the union to this file")
	fs.DurationVar(&v.wait, "wait", 0, "result files: wait up to this long for the files to be complete and cover the test")
	hdr := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		ctx, signalled, stop := g.signalContext(c.Context(), mergeSignals)
		defer stop()
		c.SetContext(ctx)
		err := mergeEither(c, g, v, hdr, args)
		if signalled() {
			msg := "merge interrupted by signal"
			if err != nil {
				msg += ": " + err.Error()
			}
			err = exitcode.Errorf(exitcode.ExternalAbort, "%s", msg)
		}
		return err
	}
}

// mergeEither merges args as result files or as HdrHistogram logs, as
// they are.
func mergeEither(c *cobra.Command, g *globals, v *verdictFlags, hdr func(*cobra.Command, []string) error, args []string) error {
	results, err := resultInputs(args, v.wait > 0)
	if err != nil {
		return err
	}
	if !results {
		if set := changed(c, verdictOnly); set != "" {
			return exitcode.Errorf(exitcode.InvalidConfig, "--%s applies to result files (-o result=FILE); %s is an HdrHistogram log", set, args[0])
		}
		return hdr(c, args)
	}
	if set := changed(c, hdrlogFlags); set != "" {
		return exitcode.Errorf(exitcode.InvalidConfig, "--%s applies to HdrHistogram logs, not to result files", set)
	}
	return runVerdict(c.Context(), g, v, args)
}

// changed returns the first of names set on the command line, "" if none.
func changed(c *cobra.Command, names []string) string {
	for _, n := range names {
		if f := c.Flags().Lookup(n); f != nil && f.Changed {
			return n
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
			return false, exitcode.Errorf(exitcode.InvalidConfig, "cannot read %s: %v", a, unwrapPath(err))
		case !st.IsDir() && !st.Mode().IsRegular():
			// Opening a named pipe waits for a writer that may never
			// come: refused at once.
			f, err := result.OpenRegular(a)
			if err == nil {
				f.Close() // it became a regular file meanwhile
			}
			return false, exitcode.Errorf(exitcode.InvalidConfig, "%v", unwrapPath(err))
		case st.IsDir() || isResultFile(a):
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

// isResultFile reports whether the file at path begins as a result file.
func isResultFile(path string) bool {
	f, err := result.OpenRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	return bytes.HasPrefix(head[:n], []byte(`{"header":`))
}

// resultReader looks at the result files of a merge: while --wait waits,
// each look takes only what the runners appended since the last, and
// learns the files' structure (headers, metrics, ends) without their
// numbers, which the merge then reads a file at a time (Tail.Open).
type resultReader struct {
	args  []string
	tails map[string]*result.Tail
	// names are the files of the last look.
	names []string
}

func newResultReader(args []string) *resultReader {
	return &resultReader{args: args, tails: map[string]*result.Tail{}}
}

// look reads what the files args name hold now, as far as they are
// written.
func (rr *resultReader) look() ([]*result.File, error) {
	names, err := rr.resultFiles()
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, exitcode.Errorf(exitcode.InvalidConfig, "%s holds no result files (written with -o result=FILE)", strings.Join(rr.args, ", "))
	}
	rr.names = names
	var files []*result.File
	for _, name := range names {
		tail := rr.follow(name)
		restarted, err := tail.Poll()
		if restarted {
			// Its runner began it anew: read it from its start.
			_, err = tail.Poll()
		}
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "cannot read %s: %v", name, unwrapPath(err))
		}
		if err != nil {
			return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
		}
		f, err := tail.File()
		if err != nil {
			return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// resultFiles lists the files args name: files as they are, and for a
// directory the result files in it (links to them included), sorted; a file already followed is
// known to be one without reading its head again.
func (rr *resultReader) resultFiles() ([]string, error) {
	var files []string
	for _, a := range rr.args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			files = append(files, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "cannot read %s: %v", a, unwrapPath(err))
		}
		for _, e := range entries {
			p := filepath.Join(a, e.Name())
			if regular(e, p) && (rr.tails[p] != nil || isResultFile(p)) {
				files = append(files, p)
			}
		}
	}
	return files, nil
}

// regular reports whether the directory entry e, at p, is a regular file
// or a symbolic link to one (a shared volume may link its files): a FIFO
// or a device is never read as a result file.
func regular(e os.DirEntry, p string) bool {
	if e.Type()&os.ModeSymlink != 0 {
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular()
	}
	return e.Type().IsRegular()
}

// follow returns the tail of the file name, begun at its first look.
func (rr *resultReader) follow(name string) *result.Tail {
	t := rr.tails[name]
	if t == nil {
		t = result.NewTail(name)
		rr.tails[name] = t
	}
	return t
}

// finish reads the files of the last look to their ends: what follows a
// file's last line break is its last line. With waited set (the reading
// went on over several looks), a file without its end line that grew
// within the last two of its intervals (or polls) was still being written, and ended says when the reading
// stopped ("the wait (--wait 5m0s) ended"), which its note then says
// instead of a killed runner.
func (rr *resultReader) finish(ended string, waited bool) ([]*result.File, error) {
	var files []*result.File
	for _, name := range rr.names {
		tail := rr.tails[name]
		grew := tail.Grew()
		f, err := tail.Finish()
		if err != nil {
			return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
		}
		if iv, err := time.ParseDuration(f.Header.Interval); waited && f.End == nil && err == nil && time.Since(grew) < 2*max(waitPoll, iv) {
			f.StillWritten(name, ended)
		}
		files = append(files, f)
	}
	return files, nil
}

// open opens a file of the last look for reading its numbers.
func (rr *resultReader) open(f *result.File) (io.ReadCloser, error) {
	t := rr.tails[f.Name]
	if t == nil {
		return nil, fmt.Errorf("%s was not looked at", f.Name)
	}
	return t.Open()
}

// waitPoll is how often --wait looks at the files again.
const waitPoll = time.Second

// await reads the files until they are complete and cover the test, or
// until wait has passed (0: once), and returns what it read last; the
// merge then says what is missing. Files of different tests, or whose
// segments overlap, and a file that is not a regular one end the wait at
// once: more time cannot mend them.
func (rr *resultReader) await(ctx context.Context, wait time.Duration) ([]*result.File, error) {
	deadline := time.Now().Add(wait)
	ended := fmt.Sprintf("the wait (--wait %s) ended", wait)
	waited := false
	for {
		files, err := rr.look()
		if errors.Is(err, result.ErrNotRegular) {
			return nil, err
		}
		if err == nil {
			_, uerr := result.Union(files)
			switch {
			case uerr == nil && !slices.ContainsFunc(files, func(f *result.File) bool { return f.End == nil }):
				return rr.finish(ended, waited)
			case uerr != nil && !errors.Is(uerr, result.ErrGap):
				return rr.finish(ended, waited) // Merge refuses them in one sentence
			}
		}
		if wait <= 0 || !time.Now().Before(deadline) {
			if err != nil {
				return nil, err
			}
			return rr.finish(ended, waited)
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return nil, err
			}
			return rr.finish("a signal stopped the wait", waited)
		case <-time.After(waitPoll):
			waited = true
		}
	}
}

// runVerdict merges result files into the verdict of the whole test.
func runVerdict(ctx context.Context, g *globals, v *verdictFlags, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := checkSummaryMode("--summary-mode", v.summaryMode); err != nil {
		return err
	}
	extra, err := parseThresholdFlags(v.thresholds)
	if err != nil {
		return err
	}
	logs, err := g.logSink(nil)
	if err != nil {
		return err
	}
	defer logs.Close()
	rr := newResultReader(args)
	files, err := rr.await(ctx, v.wait)
	if err != nil {
		return err
	}
	cfg := engine.MergeConfig{
		Files: files, Open: rr.open, Thresholds: extra,
		SummaryExport: v.summaryExport, SummaryMode: v.summaryMode, NoColor: g.noColor || g.env["NO_COLOR"] != "",
		Stdout: g.stdout, Stderr: g.stderr, StdoutTTY: isTTY(g.stdout), StderrTTY: isTTY(g.stderr), Log: logs,
	}
	if v.script != "" {
		r := &runCmd{g: g, env: v.env}
		scriptEnv, _, err := r.scriptEnv(true)
		if err != nil {
			return err
		}
		lo := loadOptions{Env: scriptEnv, Stderr: g.stderr, Log: logs, Verbose: g.verbose}
		_, path, err := r.fromArchive(v.script, &lo)
		if err != nil {
			return err
		}
		if cfg.Script, err = loadScript(path, lo); err != nil {
			return err
		}
	}
	if v.report != "" {
		ri := newReportIntervals()
		cfg.Visit = ri.add
		cfg.Report = func(in *summary.Input) error {
			return writeVerdictReport(g.stdout, v.report, ri.logReader(), files, in)
		}
	}
	return engine.Merge(ctx, cfg)
}

// parseThresholdFlags reads --threshold values, "METRIC[{tag:value}]:
// EXPRESSION", into thresholds keyed as options.thresholds.
func parseThresholdFlags(flags []string) (map[string][]metrics.ThresholdDef, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string][]metrics.ThresholdDef{}
	for _, f := range flags {
		at := 0
		if i := strings.IndexByte(f, '}'); i >= 0 {
			at = i
		}
		i := strings.IndexByte(f[at:], ':')
		key, expr := "", ""
		if i >= 0 {
			key, expr = strings.TrimSpace(f[:at+i]), strings.TrimSpace(f[at+i+1:])
		}
		if key == "" || expr == "" {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "--threshold %q: write it as METRIC[{tag:value}]: EXPRESSION, e.g. 'corrected_latency{name:login}: p(99)<500'", f)
		}
		if _, err := metrics.ParseThreshold(expr); err != nil {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "--threshold %q: %v", f, err)
		}
		out[key] = append(out[key], metrics.ThresholdDef{Source: expr})
	}
	return out, nil
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
