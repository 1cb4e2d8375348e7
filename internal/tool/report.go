package tool

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/wholefile"
	"github.com/metronome-load/metronome/output/dashboard"
	"github.com/metronome-load/metronome/output/result"
)

// Report is `metronome report`'s input and settings: the logs Files ("-"
// for Stdin), the file Out to write ("-" for Stdout), the charts'
// shortest Period (0: the logs' own).
type Report struct {
	Files          []string
	Out            string
	Period         time.Duration
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Run reads the logs and writes their report. A signal (ctx ending)
// while it reads stops it, and nothing is written.
func (rp *Report) Run(ctx context.Context) error {
	stdin, stdout, stderr, files, out, period := rp.Stdin, rp.Stdout, rp.Stderr, rp.Files, rp.Out, rp.Period
	var lr dashboard.LogReader
	for _, name := range files {
		var r io.Reader = stdin
		if name != "-" {
			f, err := result.OpenRegular(name)
			if err != nil {
				return exitcode.Errorf(exitcode.InvalidConfig, "report: cannot read %s: %v", name, PathCause(err))
			}
			defer f.Close()
			r = f
		}
		err := lr.Add(Interruptible(ctx, r), name)
		if ctx.Err() != nil {
			return exitcode.Errorf(exitcode.ExternalAbort, "report: interrupted by signal while reading %s; no report was written", name)
		}
		if err != nil {
			return exitcode.Errorf(exitcode.InvalidConfig, "report: %v", err)
		}
	}
	n, err := WriteReport(stdout, stderr, &lr, period, out, func(period time.Duration) string {
		return fmt.Sprintf("Report built from %s; intervals of %s. HdrHistogram logs hold latency histograms only: no VUs, failures, backlog, generator health band or summary tables.",
			strings.Join(files, ", "), period)
	})
	if err != nil || out == "-" {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes) from %d log(s)\n", out, n, len(files))
	return nil
}

// WriteReport renders the web dashboard's report of the logs lr read, with
// intervals of at least period and the note describe gives for the
// intervals chosen, and writes it to out ("-": stdout). It returns the
// report's size.
func WriteReport(stdout, stderr io.Writer, lr *dashboard.LogReader, period time.Duration, out string, describe func(time.Duration) string) (int, error) {
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
