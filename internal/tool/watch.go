package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/watch"
	"github.com/metronome-load/metronome/metrics"
)

// operatorPort is the port of k6-operator's runner services.
const operatorPort = 6565

// Watch is `metronome watch`'s settings: the Prometheus the instances
// write to and the series of the test in it, the runners to stop (or a
// k6-operator TestRun's name and parallelism), the thresholds besides
// the script's, how often they are evaluated.
type Watch struct {
	Prometheus, Selector string
	Runners              []string
	Testrun              string
	Parallelism          int
	Thresholds           []string
	Interval             time.Duration
	Stdout               io.Writer
	// DefineMetrics, when the test's script is given, defines its
	// metrics in the registry and returns its consolidated options.
	DefineMetrics func(ctx context.Context, reg *metrics.Registry, b *metrics.Builtin) (*config.Options, error)
}

// Run watches until the test ends or a threshold is crossed: exit 99
// when it stopped the runners, 104 when nothing can be watched, 255 when
// Prometheus answered nothing, 105 when a signal stopped it.
func (w *Watch) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if w.Prometheus == "" {
		return exitcode.Errorf(exitcode.InvalidConfig, "--prometheus is required: the Prometheus the instances write to")
	}
	if w.Interval <= 0 {
		return exitcode.Errorf(exitcode.InvalidConfig, "--interval must be positive")
	}
	runners := w.Runners
	selector := w.Selector
	if w.Testrun != "" {
		if w.Parallelism < 1 {
			return exitcode.Errorf(exitcode.InvalidConfig, "--testrun needs --parallelism, the TestRun's number of runners")
		}
		for i := 1; i <= w.Parallelism; i++ {
			runners = append(runners, fmt.Sprintf("http://%s-service-%d:%d", w.Testrun, i, operatorPort))
		}
		if selector == "" {
			selector = fmt.Sprintf("testrun_name=%q", w.Testrun)
		}
	}
	if len(runners) == 0 {
		return exitcode.Errorf(exitcode.InvalidConfig, "no runners to stop: give --runner URL for each instance, or --testrun and --parallelism")
	}
	extra, err := ParseThresholds(w.Thresholds)
	if err != nil {
		return err
	}
	reg := metrics.NewRegistry()
	builtin := metrics.RegisterBuiltin(reg)
	defs := map[string][]metrics.ThresholdDef{}
	if w.DefineMetrics != nil {
		opts, err := w.DefineMetrics(ctx, reg, builtin)
		if err != nil {
			return err
		}
		for k, v := range engine.ThresholdDefs(opts) {
			defs[k] = append(defs[k], v...)
		}
	}
	for k, v := range extra {
		for _, d := range v {
			d.AbortOnFail = true
			defs[k] = append(defs[k], d)
		}
	}
	out, err := watch.Run(ctx, watch.Config{
		Prometheus: w.Prometheus, Selector: selector, Runners: runners,
		Thresholds: defs, Registry: reg, Interval: w.Interval, Stdout: w.Stdout,
	})
	if err != nil {
		if ctx.Err() != nil {
			return exitcode.Errorf(exitcode.ExternalAbort, "the watch was stopped by a signal")
		}
		if out != nil || errors.Is(err, watch.ErrBlind) {
			return exitcode.Errorf(exitcode.Generic, "%v", err)
		}
		return exitcode.Errorf(exitcode.InvalidConfig, "%v", err)
	}
	if len(out.Crossed) > 0 {
		return exitcode.Errorf(exitcode.ThresholdsFailed, "thresholds %s were crossed on the union of %d runners, which were stopped",
			strings.Join(out.Crossed, ", "), len(runners))
	}
	return nil
}
