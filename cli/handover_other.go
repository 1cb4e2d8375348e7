//go:build !unix

package cli

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"

	"github.com/metronome-load/metronome/exitcode"
)

// execBinary runs bin as a child with this process's standard streams and
// returns its exit code, where processes cannot replace themselves. The
// console's Ctrl+C reaches the child itself, so this process only waits.
func execBinary(bin string, args, env []string) error {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, os.Stdout, os.Stderr, env
	signal.Ignore(os.Interrupt)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit):
		return exitcode.Wrap(exit.ExitCode(), errReported)
	}
	return exitcode.Errorf(exitcode.ScriptException, "automatic extension resolution could not run %s: %v", bin, err)
}
