package engine

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/output"
)

// outputStopTimeout bounds the wait for the outputs to finish, all
// together. It is above what each built-in output allows itself (10 s for
// a file or stdout, 5 s + 5 s for Prometheus), so it only ends the wait on
// an output that does not bound its own.
const outputStopTimeout = 15 * time.Second

// stopOutputs stops every output at once and waits for them, at most
// outputStopTimeout, and not past a signal that arrives while it waits
// (ctx is the run's parent context; a signal before the wait began has
// already been spent on stopping the test, and a second one ends the
// process). From here on a write to standard output may block for at most
// stdoutPatience, and such a signal gives standard output up. The error
// names every output that lost results or was not waited for: Generic
// (255) when an output lost samples, ExternalAbort (105) when a signal cut
// the wait short.
func (r *testRun) stopOutputs(ctx context.Context) error {
	// Only a signal that comes while waiting ends the wait.
	signal := ctx.Done()
	if ctx.Err() != nil {
		signal = nil
	}
	r.boundStdout(stdoutPatience)
	if len(r.outputs) == 0 {
		return nil
	}
	type stopped struct {
		o   output.Output
		err error
	}
	done := make(chan stopped, len(r.outputs))
	for _, o := range r.outputs {
		go func() { done <- stopped{o, o.Stop()} }()
	}
	timer := r.clock.NewTimer(outputStopTimeout)
	defer timer.Stop()

	var msgs []string
	waiting := map[output.Output]bool{}
	for _, o := range r.outputs {
		waiting[o] = true
	}
	code := exitcode.Generic
wait:
	for len(waiting) > 0 {
		select {
		case s := <-done:
			delete(waiting, s.o)
			if s.err != nil {
				msg := s.err.Error()
				if !strings.Contains(msg, s.o.Description()) {
					msg = fmt.Sprintf("output %s: %s", s.o.Description(), msg)
				}
				msgs = append(msgs, msg)
			}
		case <-timer.C():
			msgs = append(msgs, fmt.Sprintf("gave up waiting %s for %s to finish; its results are incomplete",
				outputStopTimeout, unfinished(r.outputs, waiting)))
			break wait
		case <-signal:
			code = exitcode.ExternalAbort
			msgs = append(msgs, fmt.Sprintf("stopped waiting for %s on a signal; its results are incomplete",
				unfinished(r.outputs, waiting)))
			r.boundStdout(0) // and for standard output: the summary is not waited for either
			break wait
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return exitcode.Errorf(code, "%s", strings.Join(msgs, "; "))
}

// stdoutPatience is how long, once the test has ended, one write to
// standard output may block before standard output is given up.
const stdoutPatience = 10 * time.Second

// writeBounder is a Stdout whose writes can be bounded (the CLI's standard
// output).
type writeBounder interface{ BoundWrites(patience time.Duration) }

// boundStdout lets each write to standard output block for at most
// patience from now on (0: give it up), so that a reader that takes
// nothing cannot hold the exit after the test has ended. It looks
// through wrappers (the writer that hides secrets) that Unwrap.
func (r *testRun) boundStdout(patience time.Duration) {
	for w := r.cfg.Stdout; w != nil; {
		if b, ok := w.(writeBounder); ok {
			b.BoundWrites(patience)
			return
		}
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// unfinished names the outputs still in waiting, in the order of -o.
func unfinished(outs []output.Output, waiting map[output.Output]bool) string {
	var names []string
	for _, o := range outs {
		if waiting[o] {
			names = append(names, o.Description())
		}
	}
	return strings.Join(names, ", ")
}
