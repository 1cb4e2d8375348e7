package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/extension"
	"github.com/metronome-load/metronome/optdecode"
)

// DefaultScenarioName is the name of the scenario the shortcut options
// (vus, duration, iterations, stages) become.
const DefaultScenarioName = "default"

// ResolveScenarios returns the scenarios of a run as raw JSON, one object
// per scenario name. The shortcut options become a single "default"
// scenario as in k6 (v2.1+):
//
//   - iterations (± vus, ± duration): shared-iterations with vus,
//     iterations, and maxDuration = duration when set;
//   - duration (± vus): constant-vus; duration must be greater than 0;
//   - stages (± vus): ramping-vus with startVUs = vus (default 1);
//   - vus alone: shared-iterations of vus VUs × vus iterations;
//   - scenarios: used as they are;
//   - nothing (or empty stages / scenarios): per-vu-iterations, 1 VU × 1
//     iteration.
//
// Setting iterations or duration together with stages or scenarios, or
// stages with scenarios, in the consolidated options is an error with exit
// code 104.
func (o *Options) ResolveScenarios() (map[string]json.RawMessage, error) {
	sc, _, err := o.resolve()
	return sc, err
}

// resolve is ResolveScenarios that also says which shortcut options made
// the default scenario ("" when the scenarios are the user's own).
func (o *Options) resolve() (map[string]json.RawMessage, string, error) {
	conflict := func(a, b string) error {
		in := ""
		if o.shortcutSource != "" {
			in = " (both set in " + o.shortcutSource + ")"
		}
		return exitcode.Errorf(exitcode.InvalidConfig,
			"options.%s and options.%s cannot be used together%s; use one, or describe the load with scenarios", a, b, in)
	}
	type obj = map[string]any
	var (
		def  obj
		from string
	)
	switch {
	case o.Iterations != nil:
		if len(o.Stages) > 0 {
			return nil, "", conflict("iterations", "stages")
		}
		if o.Scenarios != nil {
			return nil, "", conflict("iterations", "scenarios")
		}
		def = obj{"executor": "shared-iterations", "iterations": *o.Iterations}
		from = "iterations"
		if o.VUs != nil {
			def["vus"] = *o.VUs
			from = "vus and iterations"
		}
		if o.Duration != nil {
			def["maxDuration"] = o.Duration.String()
			from += " (with duration as maxDuration)"
		}
	case o.Duration != nil:
		if len(o.Stages) > 0 {
			return nil, "", conflict("duration", "stages")
		}
		if o.Scenarios != nil {
			return nil, "", conflict("duration", "scenarios")
		}
		if *o.Duration <= 0 {
			return nil, "", exitcode.Errorf(exitcode.InvalidConfig, "options.duration: must be greater than 0, got %s", o.Duration)
		}
		def = obj{"executor": "constant-vus", "duration": o.Duration.String()}
		from = "duration"
		if o.VUs != nil {
			def["vus"] = *o.VUs
			from = "vus and duration"
		}
	case len(o.Stages) > 0:
		if o.Scenarios != nil {
			return nil, "", conflict("stages", "scenarios")
		}
		start := int64(1)
		from = "stages"
		if o.VUs != nil {
			start = *o.VUs
			from = "vus (as startVUs) and stages"
		}
		stages := make([]obj, len(o.Stages))
		for i, st := range o.Stages {
			if st.Target == nil {
				return nil, "", exitcode.Wrap(exitcode.InvalidConfig, optdecode.Required(fmt.Sprintf("options.stages[%d].target", i)))
			}
			stages[i] = obj{"duration": st.Duration.String(), "target": *st.Target}
		}
		def = obj{"executor": "ramping-vus", "startVUs": start, "stages": stages}
	case o.VUs != nil && o.Scenarios == nil:
		def = obj{"executor": "shared-iterations", "vus": *o.VUs, "iterations": *o.VUs}
		from = "vus (as vus × vus shared iterations)"
	case len(o.Scenarios) > 0:
		return o.Scenarios, "", nil
	default:
		def = obj{"executor": "per-vu-iterations", "vus": 1, "iterations": 1}
		from = "defaults"
	}
	raw, err := json.Marshal(def)
	if err != nil {
		return nil, "", err
	}
	return map[string]json.RawMessage{DefaultScenarioName: raw}, from, nil
}

// shortcutWarnings are the notes k6 logs while turning the shortcut
// options into scenarios.
func shortcutWarnings(o *Options) []string {
	fallback := o.Iterations == nil && o.Duration == nil && len(o.Stages) == 0 &&
		(o.VUs == nil || o.Scenarios != nil) && len(o.Scenarios) == 0
	if !fallback {
		return nil
	}
	var w []string
	if o.Stages != nil {
		w = append(w, "options.stages is explicitly empty; running 1 iteration on 1 VU")
	}
	if o.Scenarios != nil {
		w = append(w, "options.scenarios is explicitly empty; running 1 iteration on 1 VU")
	}
	return w
}

// Scenarios resolves the scenarios of o (see ResolveScenarios) and parses
// each one with its executor type, which checks its options strictly.
// With an execution segment each scenario is this instance's share of it.
// Closed-model scenarios that set no expectedInterval get the test-wide
// expectedInterval option, or their executor's default. The result is
// ordered by startTime, then name. Every error carries exit code 104 and
// names the option path, e.g.
// `scenarios.api.executor: unknown executor "foo"; available: ...`.
func Scenarios(o *Options) ([]executor.Config, error) {
	raw, from, err := o.resolve()
	if err != nil {
		return nil, err
	}
	var interval executor.ExpectedInterval
	if o.ExpectedInterval != nil {
		if interval, err = executor.ParseExpectedInterval(*o.ExpectedInterval); err != nil {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "options.expectedInterval: %v", err)
		}
	}
	tuple, err := o.ExecutionTuple()
	if err != nil {
		return nil, err
	}
	names := sortedKeys(raw)
	cfgs := make([]executor.Config, 0, len(names))
	for _, name := range names {
		cfg, err := parseScenario(name, raw[name])
		if err != nil {
			if from != "" {
				err = fmt.Errorf("%w (the %q scenario is made from the %s options)", err, DefaultScenarioName, from)
			}
			return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
		}
		if c := executor.Ask(cfg, nil).Closed; c != nil {
			c.DefaultExpectedInterval(interval)
		}
		if cfg, err = executor.Segmented(cfg, tuple); err != nil {
			return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
		}
		cfgs = append(cfgs, cfg)
	}
	slices.SortStableFunc(cfgs, func(a, b executor.Config) int {
		if c := a.Base().StartTime - b.Base().StartTime; c != 0 {
			if c < 0 {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Base().Name, b.Base().Name)
	})
	return cfgs, nil
}

func parseScenario(name string, raw json.RawMessage) (executor.Config, error) {
	path := "scenarios." + name
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("%s: expected an object, got %s", path, describe(raw))
	}
	available := strings.Join(extension.Names(extension.Executor), ", ")
	ex, ok := fields["executor"]
	if !ok || isNull(ex) {
		return nil, fmt.Errorf("%s.executor: required; available: %s", path, available)
	}
	var exName string
	if err := json.Unmarshal(ex, &exName); err != nil {
		return nil, fmt.Errorf("%s.executor: expected a string, got %s", path, describe(ex))
	}
	t, ok := executor.Lookup(exName)
	if !ok {
		return nil, fmt.Errorf("%s.executor: unknown executor %q; available: %s", path, exName, available)
	}
	cfg, err := t.Parse(name, bytes.TrimSpace(raw))
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		return nil, fmt.Errorf("%s: executor %q returned no configuration", path, exName)
	}
	return cfg, nil
}
