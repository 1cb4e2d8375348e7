// Package engine wires one test run together and owns its lifecycle:
// VU initialisation, setup, the scenarios, teardown, the metrics pipeline,
// thresholds, outputs, the summary, aborts and signals.
package engine

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// Script is a loaded test script as the engine drives it. The js package
// implements it; engine tests fake it.
type Script interface {
	// Configure hands the consolidated options to the script before any
	// VU is made, with the run's inlet for samples from other goroutines
	// (nil when the run takes none).
	Configure(opts *config.Options, reg *metrics.Registry, b *metrics.Builtin, in *metrics.Inlet) error
	// NewVU initialises VU number id: a fresh runtime that ran the init
	// context. Its samples go to rec.
	NewVU(ctx context.Context, id uint64, rec metrics.Recorder) (executor.VU, error)
	// Setup runs setup() if the script exports it and returns its result
	// as JSON (nil when it returned undefined).
	Setup(ctx context.Context, rec metrics.Recorder) (json.RawMessage, error)
	// Teardown runs teardown(data) if exported.
	Teardown(ctx context.Context, rec metrics.Recorder, data json.RawMessage) error
	// HandleSummary runs handleSummary(data) if exported; ok is false when
	// the script does not export it. The result maps "stdout", "stderr"
	// or a file path to content.
	HandleSummary(ctx context.Context, data map[string]any) (out map[string][]byte, ok bool, err error)
	// Capabilities reports what the script offers the run: which
	// lifecycle functions and exec functions it exports, and the hooks
	// that connect its VUs to the run. The engine asks once per run.
	Capabilities() executor.Capabilities
}

// scriptEnd is an end of a run the script asked for, with
// exec.test.abort() (exit code 108) or exec.test.fail() (110), logged as
// k6 logs it: its message alone at the error level.
type scriptEnd struct{ error }

func (e scriptEnd) Unwrap() error { return e.error }

// Log writes the message at the error level with no field.
func (e scriptEnd) Log(log *slog.Logger) { log.Error(e.Error()) }

// LoggedError is an error of the script that writes itself to the log as
// k6 logs it, such as an exception thrown outside an iteration: the cli
// logs it in place of its "ERROR:" line, and the run logs handleSummary's.
type LoggedError interface {
	error
	Log(log *slog.Logger)
}
