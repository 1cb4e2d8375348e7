package engine

import (
	"encoding/json"
	"io"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/logsink"
	"github.com/metronome-load/metronome/secrets"
	"github.com/metronome-load/metronome/summary"
)

// Config is one test run as the CLI describes it.
type Config struct {
	Script Script
	// ScriptPath is shown in the banner.
	ScriptPath string
	// Options are the consolidated options.
	Options *config.Options
	// Outputs are the -o values ("json=out.json", "csv=out.csv", ...).
	Outputs []string
	// Collectors are the config file's "collectors" object: each
	// output's own settings, by output name, as k6 keeps them.
	Collectors map[string]json.RawMessage
	// SummaryExport is the --summary-export path, "" for none.
	SummaryExport string
	// SummaryMode is "compact", "full" or "disabled".
	SummaryMode string
	// MachineReadableSummary, when set (--new-machine-readable-summary),
	// makes --summary-export and handleSummary's data k6's versioned
	// machine-readable summary; it holds the main script's source.
	MachineReadableSummary *summary.Meta
	// Quiet turns off the live progress display.
	Quiet bool
	// NoColor turns off colours in the summary.
	NoColor bool
	// Env is the environment K6_* output settings are read from.
	Env map[string]string
	// Stdout and Stderr are where the summary, progress and logs go;
	// StdoutTTY and StderrTTY say whether they are terminals.
	Stdout, Stderr io.Writer
	// Log is where the run's warnings go (--log-output, --log-format);
	// nil means text lines to Stderr, as logsink.NewText. The summary and the
	// progress bars never go through it.
	Log *logsink.Sink
	// Secrets hides the secrets the script fetched in the files the run
	// writes (--summary-export, handleSummary's files, the outputs'
	// files); Stdout, Stderr and Log are expected to hide them already.
	// nil hides nothing.
	Secrets              *secrets.Store
	StdoutTTY, StderrTTY bool
	// Address is where the REST API listens ("host:port"), "" for no API.
	Address string
	// APIAddr, when set, learns the address the API bound (for port 0).
	APIAddr func(addr string)
	// Paused makes the run wait, VUs initialised, until the REST API
	// resumes it.
	Paused bool

	// healthOff turns the periodic health measurement off; only the
	// benchmark that measures its cost sets it (export_test.go).
	healthOff bool
}
