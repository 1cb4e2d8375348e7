package cli

import (
	"encoding/json"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/js"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/secrets"
)

// Script is a loaded test script as `run` needs it: what the engine drives,
// plus the options the script exports (as JSON), the script tier.
type Script interface {
	engine.Script
	Options() json.RawMessage
}

// loadOptions is what loading a script needs from the command line.
type loadOptions struct {
	// Env is the script's __ENV.
	Env map[string]string
	// Stderr receives console output and script warnings.
	Stderr io.Writer
	// Log is where console output and warnings go.
	Log *logsink.Sink
	// Verbose lets console.debug through (-v).
	Verbose bool
	// Files are the files of an archive the script comes from.
	Files map[string][]byte
	// Secrets are the --secret-source stores.
	Secrets *secrets.Store
	// LookupEnv is modules' view of the process environment
	// (modules.Run.LookupEnv); nil means os.LookupEnv.
	LookupEnv func(key string) (string, bool)
}

// The steps of `run` that reach outside the command line are variables, so
// that tests can substitute a fake script and a fake engine and run the
// whole command without JavaScript or load.
var (
	// loadScript loads and initialises a script (runs its init context once
	// to read its options).
	loadScript = func(path string, o loadOptions) (Script, error) {
		// js.Load writes its own warnings and errors to Stderr in k6's
		// log layout, with their level, so no Logf is passed.
		s, err := js.Load(path, js.LoadOptions{Env: o.Env, Stderr: o.Stderr, Log: o.Log, Verbose: o.Verbose, Files: o.Files,
			Secrets: o.Secrets, LookupEnv: o.LookupEnv})
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	// runEngine runs the test.
	runEngine = engine.Run
	// notifySignals relays SIGINT and SIGTERM to c until the returned
	// function is called; from then on they are ignored, not given back
	// their default action: the command's work is done, and a signal in
	// the moment before the process exits must not kill it without its
	// exit code.
	notifySignals = func(c chan<- os.Signal) (stop func()) {
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		return func() {
			signal.Ignore(os.Interrupt, syscall.SIGTERM)
			signal.Stop(c)
		}
	}
	// exitNow ends the process (the second Ctrl+C).
	exitNow = os.Exit
)
