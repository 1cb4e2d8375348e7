package executor

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/optdecode"
)

// DefaultGracefulStop is k6's default gracefulStop.
const DefaultGracefulStop = 30 * time.Second

var scenarioNameRE = regexp.MustCompile(`^[0-9a-zA-Z_-]+$`)

// BaseOptions are the JSON fields every executor accepts. Executor configs
// embed it so that strict decoding accepts the common options.
type BaseOptions struct {
	Executor     string             `json:"executor"`
	StartTime    *duration.Duration `json:"startTime"`
	GracefulStop *duration.Duration `json:"gracefulStop"`
	Exec         *string            `json:"exec"`
	Env          map[string]string  `json:"env"`
	Tags         map[string]string  `json:"tags"`
	Options      json.RawMessage    `json:"options"`
}

// Scenario validates the common options and returns them with defaults
// applied. Errors name the option path.
func (b *BaseOptions) Scenario(name string) (*Scenario, error) {
	if !scenarioNameRE.MatchString(name) {
		return nil, fmt.Errorf("scenarios.%s: a scenario name may only contain letters, digits, '_' and '-'", name)
	}
	s := &Scenario{Name: name, Executor: b.Executor, GracefulStop: DefaultGracefulStop, Exec: "default", Env: b.Env, Tags: b.Tags}
	if b.StartTime != nil {
		if *b.StartTime < 0 {
			return nil, fmt.Errorf("scenarios.%s.startTime: must not be negative", name)
		}
		s.StartTime = b.StartTime.Std()
	}
	if b.GracefulStop != nil {
		if *b.GracefulStop < 0 {
			return nil, fmt.Errorf("scenarios.%s.gracefulStop: must not be negative", name)
		}
		s.GracefulStop = b.GracefulStop.Std()
	}
	if b.Exec != nil {
		if strings.TrimSpace(*b.Exec) == "" {
			return nil, fmt.Errorf("scenarios.%s.exec: must name an exported function", name)
		}
		s.Exec = *b.Exec
	}
	return s, nil
}

// DecodeStrict decodes one scenario's JSON object into v, a pointer,
// rejecting unknown options, wrongly typed values and trailing data. It is
// the options grammar's strict decoder (optdecode.Strict), the same that
// decodes the rest of the options, so every error names the option path
// and is worded as theirs are:
//
//	scenarios.api.timeUnit: invalid duration "1x"
//	scenarios.api.env.REGION: expected a string, got 5
//	scenarios.api.rate: expected a whole number, got 1.5
//
// scenario is the path of the object below "scenarios.": a scenario's name,
// or "api.stages[1]" for an object nested in a scenario. Extension
// executors decode their options with it (or with DecodeScenario).
func DecodeStrict(scenario string, raw json.RawMessage, v any) error {
	return optdecode.Strict("scenarios."+scenario, raw, v)
}

// DecodeScenario is the start of every executor's Parse: it decodes raw
// strictly into o, an options struct that embeds BaseOptions, and returns
// the validated common options.
func DecodeScenario(name string, raw json.RawMessage, o interface {
	Scenario(name string) (*Scenario, error)
}) (*Scenario, error) {
	if err := DecodeStrict(name, raw, o); err != nil {
		return nil, err
	}
	return o.Scenario(name)
}

// Account emits the iteration-level samples of one finished iteration
// into the VU's recorder, as docs/DESIGN.md §2.2 defines them: for a
// completed or failed iteration iterations 1 and iteration_duration
// (end − start), as k6, and with an intended start schedule_lag
// (start − intended). corrected_latency is not among them: the iteration's
// requests record it, one sample each (Iteration.Latency).
//
// It returns whether the iteration counts as completed.
func (d *Deps) Account(vu VU, it Iteration, res Result) bool {
	if res.Outcome == Interrupted {
		if d.State != nil {
			d.State.IterationsInterrupted.Add(1)
		}
		return false
	}
	rec := vu.Recorder()
	m := d.Metrics
	tags := res.Tags
	if tags == nil {
		tags = d.IterationTags
	}
	rec.Record(metrics.Sample{Metric: m.IterationDuration, Tags: tags, Time: res.End, Value: metrics.Milliseconds(res.End.Sub(res.Start))})
	rec.Record(metrics.Sample{Metric: m.Iterations, Tags: tags, Time: res.End, Value: 1})
	if !it.Intended.IsZero() {
		lag := max(res.Start.Sub(it.Intended), 0)
		rec.Record(metrics.Sample{Metric: m.ScheduleLag, Tags: tags, Time: res.End, Value: metrics.Milliseconds(lag)})
	}
	if d.State != nil {
		d.State.IterationsCompleted.Add(1)
	}
	return true
}

// Drop accounts for an intended iteration that never started: one
// dropped_iterations sample with the executor-level tags (as k6), and a
// corrected_latency sample of giveUp − intended tagged outcome=dropped.
func (d *Deps) Drop(intended, giveUp time.Time) {
	d.CountDrop(giveUp)
	d.ChargeDrop(intended, giveUp)
}

// CountDrop is Drop's dropped_iterations sample alone, at the moment the
// iteration was found dropped.
func (d *Deps) CountDrop(at time.Time) {
	d.Recorder.Record(metrics.Sample{Metric: d.Metrics.DroppedIterations, Tags: d.Tags, Time: at, Value: 1})
}

// ChargeDrop is Drop's corrected_latency sample alone, for an iteration
// CountDrop counted earlier.
func (d *Deps) ChargeDrop(intended, giveUp time.Time) {
	d.Recorder.Record(metrics.Sample{Metric: d.Metrics.CorrectedLatency, Tags: d.IterationTags.With("outcome", "dropped"),
		Time: giveUp, Value: metrics.Milliseconds(max(giveUp.Sub(intended), 0))})
}
