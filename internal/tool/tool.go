// Package tool holds the commands that run after a test, on the files it
// left: merge (result files or HdrHistogram logs), audit (a stock k6
// run's JSON output), compare (two runs), report (an HTML report of
// logs) and watch (abortOnFail over a distributed test). As in pebble's
// tool package, each tool is one file here and reads its format through
// that format's own package (output/result, output/hdrlog,
// internal/audit, internal/compare, internal/watch); package cli only
// declares the commands, their flags and help, and calls them.
package tool

import (
	"context"
	"io"
	"io/fs"
	"strings"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/metrics"
)

// errInterrupted is what an Interruptible reader returns once a signal
// came.
var errInterrupted = exitcode.Errorf(exitcode.ExternalAbort, "interrupted by signal")

// Interruptible is r, whose reads fail with an error of exit code 105
// (exitcode.ExternalAbort) once ctx ends (a signal): a tool reading a
// large input stops within one read.
func Interruptible(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, errInterrupted
	}
	return c.r.Read(p)
}

// ParseThresholds reads --threshold values, "METRIC[{tag:value}]:
// EXPRESSION", into thresholds keyed as options.thresholds.
func ParseThresholds(flags []string) (map[string][]metrics.ThresholdDef, error) {
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

// PathCause drops an *fs.PathError's wrapper, whose message repeats the
// name the tools' messages already give.
func PathCause(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
