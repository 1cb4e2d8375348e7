package cli

import (
	"context"
	"io"

	"github.com/metronome-load/metronome/exitcode"
)

// The words of the commands that read results, for signalContext.
var (
	mergeSignals = signalWords{
		first:  "stopping the wait; what was read is merged and its files written whole",
		second: "files not yet written are not written",
	}
	readSignals = signalWords{
		first:  "stopping; no file is written",
		second: "files not yet written are not written",
	}
)

// errInterrupted is what an interruptible reader returns once a signal
// came.
var errInterrupted = exitcode.Errorf(exitcode.ExternalAbort, "interrupted by signal")

// interruptible is r, whose reads fail with errInterrupted once ctx ends
// (a signal): a command reading a large input stops within one read.
func interruptible(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

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
