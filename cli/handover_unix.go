//go:build unix

package cli

import (
	"syscall"

	"github.com/metronome-load/metronome/exitcode"
)

// execBinary replaces this process by bin: the same process, so that the
// terminal's and a supervisor's signals reach it, and its exit code is
// the command's. It returns only when bin cannot be run.
func execBinary(bin string, args, env []string) error {
	err := syscall.Exec(bin, append([]string{bin}, args...), env)
	return exitcode.Errorf(exitcode.ScriptException, "automatic extension resolution could not run %s: %v", bin, err)
}
