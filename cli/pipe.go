package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// surviveClosedStdout keeps the process alive when standard output or
// standard error is a pipe whose reader has gone (metronome run … | head):
// a write then fails with EPIPE instead of killing the process with
// SIGPIPE before the outputs have written and closed their files. Asking
// for SIGPIPE is what turns Go's default (die on a broken stdout) off; the
// signals themselves are not needed.
func surviveClosedStdout() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}
