package executor

import (
	"fmt"

	"github.com/metronome-load/metronome/executor/segment"
)

// Segmented returns the scenario cfg as the instance of t runs it (k6's
// per-executor scaling): the closed-model executors hold the instance's
// share of the VUs (shared-iterations also of the iterations, striped by
// VU count), the arrival-rate executors its share of the VU budget and the
// global arrival indices of its stripe of maxVUs, at their global times.
// cfg itself is left unchanged. A nil t returns cfg.
func Segmented(cfg Config, t *segment.Tuple) (Config, error) {
	if t == nil {
		return cfg, nil
	}
	switch c := cfg.(type) {
	case *ConstantVUsConfig:
		cp := *c
		cp.VUs, cp.stripe = t.Scale(c.VUs), t
		return &cp, nil
	case *PerVUIterationsConfig:
		cp := *c
		cp.VUs, cp.stripe = t.Scale(c.VUs), t
		return &cp, nil
	case *SharedIterationsConfig:
		cp := *c
		cp.VUs = t.Scale(c.VUs)
		rt, ok := t.Resegment(c.VUs)
		if !ok {
			cp.Iterations, cp.stripe = 0, nil
			return &cp, nil
		}
		cp.Iterations, cp.stripe = rt.Scale(c.Iterations), rt
		return &cp, nil
	case *RampingVUsConfig:
		cp := *c
		cp.stripe = t
		return &cp, nil
	case *ConstantArrivalRateConfig:
		cp := *c
		segmentArrivals(&cp.ArrivalConfig, t)
		return &cp, nil
	case *RampingArrivalRateConfig:
		cp := *c
		segmentArrivals(&cp.ArrivalConfig, t)
		return &cp, nil
	case *IntendedArrivalRateConfig:
		cp := *c
		segmentArrivals(&cp.ArrivalConfig, t)
		return &cp, nil
	case Segmenter:
		return c.Segmented(t)
	}
	return nil, fmt.Errorf("scenarios.%s.executor: %s does not support execution segments", cfg.Base().Name, cfg.Base().Executor)
}

// segmentArrivals scales the VU budget of an arrival-rate scenario and
// gives it the stripe of arrival indices k6 assigns: the sequence
// re-split by maxVUs.
func segmentArrivals(c *ArrivalConfig, t *segment.Tuple) {
	rt, ok := t.Resegment(int64(c.maxVUs))
	c.preAllocated = int(t.Scale(int64(c.preAllocated)))
	c.maxVUs = int(t.Scale(int64(c.maxVUs)))
	c.stripe, c.idle = rt, !ok
	c.segment = t.Length()
}
