package executor

import (
	"errors"
	"fmt"

	"github.com/metronome-load/metronome/executor/segment"
)

// ErrNoSegments is what Config.Segmented returns for a scenario that
// cannot be split over the instances of a distributed test.
var ErrNoSegments = errors.New("does not support execution segments")

// Segmented returns the scenario cfg as the instance of t runs it, through
// cfg's own Segmented (k6's per-executor scaling): the closed-model
// executors hold the instance's share of the VUs (shared-iterations also
// of the iterations, striped by VU count), the arrival-rate executors its
// share of the VU budget and the global arrival indices of its stripe of
// maxVUs, at their global times. cfg itself is left unchanged. A nil t
// returns cfg; a config that returns ErrNoSegments is refused with its
// option path.
func Segmented(cfg Config, t *segment.Tuple) (Config, error) {
	if t == nil {
		return cfg, nil
	}
	out, err := cfg.Segmented(t)
	if errors.Is(err, ErrNoSegments) {
		return nil, fmt.Errorf("scenarios.%s.executor: %s %w", cfg.Base().Name, cfg.Base().Executor, ErrNoSegments)
	}
	return out, err
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
