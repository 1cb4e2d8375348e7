package tool

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/compare"
	"github.com/metronome-load/metronome/internal/wholefile"
)

// Compare is `metronome compare`'s input and settings: the logs or result
// files of a base run and a new one.
type Compare struct {
	Base, New      string
	Options        compare.Options
	JSON           bool
	HTML           string
	Stdout, Stderr io.Writer
}

// Run compares the runs and prints the report: exit 99 for a regression,
// 104 for a file that cannot be read or bad options. Once ctx ends (a
// signal), the reading stops within one read and the bootstrap within one
// resample, and nothing is written (exit 105).
func (c *Compare) Run(ctx context.Context) error {
	stdout, stderr, o, asJSON, html := c.Stdout, c.Stderr, c.Options, c.JSON, c.HTML
	var runs [2]*compare.Run
	for i, path := range []string{c.Base, c.New} {
		r, err := compare.ReadFile(path, func(r io.Reader) io.Reader { return Interruptible(ctx, r) })
		if ctx.Err() != nil {
			return exitcode.Errorf(exitcode.ExternalAbort, "compare: interrupted by signal while reading %s; nothing was written", path)
		}
		if err != nil {
			return exitcode.Errorf(exitcode.InvalidConfig, "compare: %v", err)
		}
		for _, w := range r.Warnings {
			fmt.Fprintf(stderr, "warning: %s\n", w)
		}
		if r.Negative > 0 || r.Dropped > 0 {
			fmt.Fprintf(stderr, "warning: %s: %d negative values and %d past 11 days are not compared\n", path, r.Negative, r.Dropped)
		}
		runs[i] = r
	}
	o.Done = ctx.Done()
	rep, err := compare.Compare(runs[0], runs[1], o)
	if errors.Is(err, compare.ErrStopped) || ctx.Err() != nil {
		return exitcode.Errorf(exitcode.ExternalAbort, "compare: interrupted by signal; nothing was written")
	}
	if err != nil {
		return exitcode.Errorf(exitcode.InvalidConfig, "compare: %v", err)
	}
	if html != "" {
		if err := wholefile.WriteWith(html, 0o644, rep.WriteHTML); err != nil {
			return exitcode.Errorf(exitcode.Generic, "compare: writing %s: %v", html, err)
		}
	}
	if asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if rep.Verdict.Regression {
		return exitcode.Errorf(exitcode.ThresholdsFailed, "compare: regression: %s", rep.Verdict.Reason)
	}
	return nil
}
