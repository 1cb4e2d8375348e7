package executor

import "github.com/metronome-load/metronome/metrics"

// ScenarioTags are the tag sets of a scenario's samples. They are computed
// once per run, by NewScenarioTags, and the same value tags both what the
// executor emits and what the VUs record: were they computed twice and
// drifted, a metric such as corrected_latency{scenario:x} would silently
// split into two series.
type ScenarioTags struct {
	// Executor tags executor-level samples: the run tags plus the
	// scenario system tag (k6 tags dropped_iterations with these only).
	Executor *metrics.TagSet
	// Iteration tags the samples of the scenario's iterations: the run
	// tags, the scenario's own tags, and the scenario and group system
	// tags (group "" outside any group()).
	Iteration *metrics.TagSet
}

// NewScenarioTags computes the tag sets of sc's samples from the run's
// tags (options.tags) and the enabled system tags (options.systemTags).
func NewScenarioTags(run *metrics.TagSet, systemTags map[string]bool, sc *Scenario) ScenarioTags {
	if run == nil {
		run = metrics.EmptyTags
	}
	exec := run
	if systemTags["scenario"] {
		exec = exec.With("scenario", sc.Name)
	}
	iter := run.Merge(metrics.NewTags(sc.Tags))
	if systemTags["scenario"] {
		iter = iter.With("scenario", sc.Name)
	}
	if systemTags["group"] {
		iter = iter.With("group", "")
	}
	return ScenarioTags{Executor: exec, Iteration: iter}
}
