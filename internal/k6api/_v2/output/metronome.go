package output

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"

	"github.com/metronome-load/metronome/config"
	mm "github.com/metronome-load/metronome/metrics"
	mout "github.com/metronome-load/metronome/output"

	"go.k6.io/k6/v2/internal/logger"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/metrics"
)

// This file plugs k6 outputs into metronome: each registration becomes a
// metronome output whose constructor makes the k6 one and hands it the
// run's samples.

// plugIn registers c with metronome as the output name.
func plugIn(name string, c Constructor) {
	mout.Register(name, func(p mout.Params) (mout.Output, error) { return construct(name, c, p) })
}

// construct makes the k6 output of c for the run metronome's p describes
// and gives it, before Start, what its optional interfaces ask for.
func construct(name string, c Constructor, p mout.Params) (mout.Output, error) {
	opts := scriptOptions(p.Options)
	params := Params{
		OutputType:     name,
		ConfigArgument: p.Arg,
		JSONConfig:     p.JSONConfig,
		Logger:         logger.New(p.Log),
		Environment:    p.Env,
		StdOut:         p.Stdout,
		StdErr:         p.Stderr,
		ScriptOptions:  opts,
	}
	if p.Script != "" {
		abs, err := filepath.Abs(p.Script)
		if err != nil {
			abs = p.Script
		}
		params.ScriptPath = &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	}
	out, err := c(params)
	if err != nil {
		return nil, fmt.Errorf("could not create the '%s' output: %w", name, err)
	}
	if out == nil {
		return nil, fmt.Errorf("could not create the '%s' output: its constructor returned none", name)
	}
	reg := metrics.MetronomeRegistry(p.Registry)
	if o, ok := out.(WithThresholds); ok {
		o.SetThresholds(opts.Thresholds)
	}
	if o, ok := out.(WithBuiltinMetrics); ok {
		o.SetBuiltinMetrics(metrics.RegisterBuiltinMetrics(reg))
	}
	if o, ok := out.(WithTestRunStop); ok && p.StopTest != nil {
		o.SetTestRunStopCallback(p.StopTest)
	}
	return &adapter{out: out, reg: reg}, nil
}

// scriptOptions are the run's consolidated options, as metronome hands
// them to outputs in JSON, as k6's.
func scriptOptions(raw json.RawMessage) lib.Options {
	var o config.Options
	if len(raw) > 0 {
		// They were encoded from config.Options by the engine.
		_ = json.Unmarshal(raw, &o)
	}
	return lib.MetronomeOptions(&o)
}

// adapter is a k6 output as metronome's.
type adapter struct {
	out Output
	reg *metrics.Registry

	mu sync.Mutex
	// runErr is the error the run ended with, told before Stop.
	runErr error
}

var _ mout.EndReceiver = (*adapter)(nil)

func (a *adapter) Description() string { return a.out.Description() }

func (a *adapter) Start() error { return a.out.Start() }

// AddSamples hands the batch over as one container; the engine's calls
// never overlap, as k6's do not.
func (a *adapter) AddSamples(batch []mm.Sample) {
	if len(batch) == 0 {
		return
	}
	a.out.AddMetricSamples([]metrics.SampleContainer{metrics.MetronomeBatch(a.reg, batch)})
}

// ReceiveEnd keeps the error the run ended with, for StopWithTestError.
func (a *adapter) ReceiveEnd(end mout.RunEnd) {
	a.mu.Lock()
	a.runErr = end.Err
	a.mu.Unlock()
}

// Stop calls StopWithTestError, with the run's error, on an output that
// has it, else Stop.
func (a *adapter) Stop() error {
	if o, ok := a.out.(WithStopWithTestError); ok {
		a.mu.Lock()
		err := a.runErr
		a.mu.Unlock()
		return o.StopWithTestError(err)
	}
	return a.out.Stop()
}
