package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"go.k6.io/k6/v2/metrics"
	"go.k6.io/k6/v2/output"
)

func init() { output.RegisterExtension("probe", newOutput) }

// probeOutput is an output written as published output extensions are: it
// buffers with a SampleBuffer, folds the buffer on a PeriodicFlusher, and
// at Stop writes what it saw as JSON to the file -o probe=FILE names.
type probeOutput struct {
	params  output.Params
	logger  logrus.FieldLogger
	buffer  output.SampleBuffer
	flusher *output.PeriodicFlusher

	mu         sync.Mutex
	report     report
	thresholds map[string]metrics.Thresholds
	// sinks aggregate each metric as k6's outputs that keep their own
	// aggregates do.
	sinks map[string]metrics.Sink
	// stopTest aborts the run; with PROBE_OUT_STOP=1 the first flush
	// that finds samples calls it.
	stopTest func(error)
}

// report is what the output saw.
type report struct {
	// Counts and Sums are the samples' count and sum by metric name.
	Counts map[string]int     `json:"counts"`
	Sums   map[string]float64 `json:"sums"`
	// Kinds are the metrics' types and value types, "trend/time".
	Kinds map[string]string `json:"kinds"`
	// Tags are the tag names samples of a metric carried, by metric.
	Tags map[string][]string `json:"tags"`
	// Formats are what a k6 sink of each metric's type gave at Stop.
	Formats map[string]map[string]float64 `json:"formats"`
	// Outcomes count corrected_latency's samples by their outcome tag,
	// "" for a request that was answered.
	Outcomes map[string]int `json:"outcomes"`
	// Thresholds are the sources SetThresholds gave, by metric.
	Thresholds map[string][]string `json:"thresholds"`
	// Flushes counts the flusher's calls that found samples.
	Flushes    int             `json:"flushes"`
	JSONConfig json.RawMessage `json:"jsonConfig"`
	OutputType string          `json:"outputType"`
	Env        string          `json:"env"`
	Script     string          `json:"script"`
	VUs        int64           `json:"vus"`
	StopError  string          `json:"stopError"`
}

func newOutput(p output.Params) (output.Output, error) {
	if p.ConfigArgument == "" {
		return nil, errors.New("name the report file, as -o probe=FILE")
	}
	o := &probeOutput{params: p, logger: p.Logger.WithField("output", "probe"), sinks: map[string]metrics.Sink{}}
	o.report = report{
		Counts: map[string]int{}, Sums: map[string]float64{}, Kinds: map[string]string{},
		Tags: map[string][]string{}, Outcomes: map[string]int{}, JSONConfig: p.JSONConfig, OutputType: p.OutputType,
		Env: p.Environment["PROBE_OUT_ENV"], VUs: p.ScriptOptions.VUs.Int64,
	}
	if p.ScriptPath != nil {
		o.report.Script = p.ScriptPath.Scheme + ":" + p.ScriptPath.Path
	}
	return o, nil
}

func (o *probeOutput) Description() string { return "probe (" + o.params.ConfigArgument + ")" }

func (o *probeOutput) SetThresholds(ts map[string]metrics.Thresholds) { o.thresholds = ts }

func (o *probeOutput) SetTestRunStopCallback(stop func(error)) { o.stopTest = stop }

func (o *probeOutput) Start() error {
	if o.params.Environment["PROBE_OUT_START"] == "fail" {
		return errors.New("the probe's service is not there")
	}
	o.report.Thresholds = map[string][]string{}
	for name, ts := range o.thresholds {
		for _, t := range ts.Thresholds {
			o.report.Thresholds[name] = append(o.report.Thresholds[name], t.Source)
		}
	}
	pf, err := output.NewPeriodicFlusher(50*time.Millisecond, o.flush)
	if err != nil {
		return err
	}
	o.flusher = pf
	o.logger.Info("probe output started")
	return nil
}

func (o *probeOutput) AddMetricSamples(samples []metrics.SampleContainer) {
	o.buffer.AddMetricSamples(samples)
}

// flush folds what the buffer holds into the report.
func (o *probeOutput) flush() {
	containers := o.buffer.GetBufferedSamples()
	if len(containers) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.report.Flushes++
	if o.report.Flushes == 1 && o.params.Environment["PROBE_OUT_STOP"] == "1" {
		o.stopTest(errors.New("the probe's service went away"))
	}
	for _, c := range containers {
		for _, s := range c.GetSamples() {
			name := s.Metric.Name
			o.report.Counts[name]++
			if o.sinks[name] == nil {
				o.sinks[name] = metrics.NewSink(s.Metric.Type)
			}
			o.sinks[name].Add(s)
			o.report.Sums[name] += s.Value
			if name == "corrected_latency" {
				outcome, _ := s.Tags.Get("outcome")
				o.report.Outcomes[outcome]++
			}
			o.report.Kinds[name] = s.Metric.Type.String() + "/" + s.Metric.Contains.String()
			for k := range s.Tags.Map() {
				if !contains(o.report.Tags[name], k) {
					o.report.Tags[name] = append(o.report.Tags[name], k)
					sort.Strings(o.report.Tags[name])
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// StopWithTestError stops the flusher, which folds what is left, and
// writes the report.
func (o *probeOutput) StopWithTestError(testErr error) error {
	o.flusher.Stop()
	o.mu.Lock()
	defer o.mu.Unlock()
	if testErr != nil {
		o.report.StopError = testErr.Error()
	}
	o.report.Formats = map[string]map[string]float64{}
	for name, sink := range o.sinks {
		o.report.Formats[name] = sink.Format(time.Second)
	}
	b, err := json.Marshal(o.report)
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.params.ConfigArgument, b, 0o644); err != nil {
		return fmt.Errorf("writing the probe's report: %w", err)
	}
	return nil
}

func (o *probeOutput) Stop() error { return o.StopWithTestError(nil) }

var (
	_ output.WithThresholds        = (*probeOutput)(nil)
	_ output.WithStopWithTestError = (*probeOutput)(nil)
	_ output.WithTestRunStop       = (*probeOutput)(nil)
)
