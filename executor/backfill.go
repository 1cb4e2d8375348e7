package executor

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/metronome-load/metronome/duration"
)

// IntervalMode says how a closed-model scenario back-fills
// corrected_latency (docs/DESIGN.md §2.3).
type IntervalMode uint8

// The modes. IntervalUnset is the zero value: the scenario said nothing,
// so the run's default applies (see ClosedModel); an executor that is
// given no default treats it as IntervalOff.
const (
	IntervalUnset IntervalMode = iota
	IntervalOff
	IntervalFixed
	IntervalAuto
)

// ExpectedInterval is the expectedInterval of a closed-model scenario, or
// the test-wide default for it: off, a hand-set duration, or auto (each
// VU's interval estimated from its own recent iterations by a Cadence).
type ExpectedInterval struct {
	Mode IntervalMode
	// Fixed is the hand-set interval, > 0 exactly when Mode is IntervalFixed.
	Fixed time.Duration
}

// ParseExpectedInterval reads the text form of expectedInterval: "auto",
// "off", or a duration in k6 syntax ("12.5ms", "1s", "250" for
// milliseconds); a zero duration is "off". The error does not name the
// option, so callers can name the flag, variable or option path.
func ParseExpectedInterval(s string) (ExpectedInterval, error) {
	switch t := strings.TrimSpace(s); strings.ToLower(t) {
	case "auto":
		return ExpectedInterval{Mode: IntervalAuto}, nil
	case "off":
		return ExpectedInterval{Mode: IntervalOff}, nil
	case "":
		return ExpectedInterval{}, errors.New(`must be "auto", "off" or a duration such as "10ms", got ""`)
	default:
		d, err := duration.Parse(t)
		if err != nil {
			return ExpectedInterval{}, fmt.Errorf(`must be "auto", "off" or a duration such as "10ms", got %q`, t)
		}
		return intervalOf(d)
	}
}

func intervalOf(d time.Duration) (ExpectedInterval, error) {
	switch {
	case d < 0:
		return ExpectedInterval{}, fmt.Errorf("must not be negative, got %s", d)
	case d == 0:
		return ExpectedInterval{Mode: IntervalOff}, nil
	}
	return ExpectedInterval{Mode: IntervalFixed, Fixed: d}, nil
}

// UnmarshalJSON reads a scenario's expectedInterval: a string as
// ParseExpectedInterval reads it, or a number of milliseconds.
func (e *ExpectedInterval) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	var err error
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err = json.Unmarshal(b, &s); err == nil {
			*e, err = ParseExpectedInterval(s)
		}
		return err
	}
	var ms float64
	if json.Unmarshal(b, &ms) != nil {
		return fmt.Errorf(`must be "auto", "off" or a duration such as "10ms", got %s`, b)
	}
	d, err := duration.FromMillis(ms)
	if err == nil {
		*e, err = intervalOf(d)
	}
	return err
}

// Enabled reports whether the scenario back-fills corrected_latency.
func (e ExpectedInterval) Enabled() bool { return e.Mode == IntervalFixed || e.Mode == IntervalAuto }

// String is the option's text form: "auto", "off", a duration, or "" when
// unset.
func (e ExpectedInterval) String() string {
	switch e.Mode {
	case IntervalOff:
		return "off"
	case IntervalFixed:
		return e.Fixed.String()
	case IntervalAuto:
		return "auto"
	}
	return ""
}

// withDefault resolves a scenario's expectedInterval against the run's
// default and the executor's own.
func withDefault(own, def ExpectedInterval, executorDefault IntervalMode) ExpectedInterval {
	if own.Mode != IntervalUnset {
		return own
	}
	if def.Mode != IntervalUnset {
		return def
	}
	return ExpectedInterval{Mode: executorDefault}
}

// The estimator of expectedInterval: 'auto'. Each VU keeps the intervals
// (start to next start) of its last CadenceWindow normal iterations and
// estimates its cadence as their median, once it has CadenceMinIterations
// of them.
const (
	// CadenceWindow is how many of a VU's most recent normal iterations
	// the estimate is the median of. A median ignores up to half of them,
	// so a stall, which costs a closed-loop VU one slow iteration, cannot
	// move it; a lasting change of cadence moves it within half a window.
	CadenceWindow = 32
	// CadenceMinIterations is how many intervals of normal iterations a
	// VU observes before it has an estimate (the median of 5 ignores the
	// 2 slowest, e.g. a first iteration that opened connections, and a
	// stall). Nothing is back-filled for the iterations before.
	CadenceMinIterations = 5
	// CadenceFloor is the smallest interval an estimate gives: a VU whose
	// iterations mostly take no time (a script that returns early by
	// design) would otherwise back-fill one sample per microsecond of
	// its real iterations.
	CadenceFloor = 100 * time.Microsecond
)

// Cadence estimates one VU's expected interval from its recent normal
// iterations: the median of the last CadenceWindow intervals between the
// starts of consecutive iterations (think time and minIterationDuration
// included, as a user's cadence does). The executor asks for the estimate
// before an iteration starts, so the iteration being back-filled never
// counts toward its own interval.
// Observe and Estimate take a few dozen nanoseconds and never allocate.
// The zero value is ready; a Cadence is not safe for concurrent use.
type Cadence struct {
	ring [CadenceWindow]time.Duration // observations in order; ring[next] is the oldest once full
	// order holds, in order[:n], the ring positions by ascending
	// duration: one byte per observation rather than a sorted copy of
	// the durations keeps a closed-model VU's wrapper 200 B smaller.
	order [CadenceWindow]uint8
	n     uint8
	next  uint8
}

// The ring positions must fit the bytes of Cadence.order.
const _ uint8 = CadenceWindow - 1

// Observe adds the interval of one normal iteration (from its start to
// the next iteration's start), dropping the oldest once the window is
// full.
func (c *Cadence) Observe(d time.Duration) {
	n := int(c.n)
	if n == CadenceWindow {
		i := slices.Index(c.order[:n], c.next)
		copy(c.order[i:n-1], c.order[i+1:n])
		n--
	}
	c.ring[c.next] = d
	j, _ := slices.BinarySearchFunc(c.order[:n], d, func(pos uint8, d time.Duration) int {
		return cmp.Compare(c.ring[pos], d)
	})
	copy(c.order[j+1:n+1], c.order[j:n])
	c.order[j] = c.next
	c.n = uint8(n + 1)
	c.next = (c.next + 1) % CadenceWindow
}

// Estimate returns the median of the observed window, at least
// CadenceFloor, and false until CadenceMinIterations were observed.
func (c *Cadence) Estimate() (time.Duration, bool) {
	n := int(c.n)
	if n < CadenceMinIterations {
		return 0, false
	}
	m := n / 2
	med := c.ring[c.order[m]]
	if n%2 == 0 {
		lo := c.ring[c.order[m-1]]
		med = lo + (med-lo)/2
	}
	return max(med, CadenceFloor), true
}

// BackFillAccount is the end-of-test account of a closed-model scenario
// that back-fills corrected_latency (docs/DESIGN.md §2.4).
type BackFillAccount struct {
	// Interval is the scenario's expectedInterval after defaults.
	Interval ExpectedInterval
	// Requests counts the requests that recorded their duration into
	// corrected_latency.
	Requests int64
	// Backfilled counts the samples added (tagged backfilled=true).
	Backfilled int64
	// Unestimated counts the iterations (auto only) that ran while their
	// VU had no estimate yet: their requests were not back-filled.
	Unestimated int64
	// Estimates holds, ascending, the estimate of each VU (auto only)
	// that had one when it left the scenario.
	Estimates []time.Duration
}

// Cadences summarises the intervals the account's requests were
// back-filled with: for 'auto', how many VUs had an estimate and the
// median and range of their estimates; for a hand-set expectedInterval,
// no VUs and that interval three times; zeros otherwise.
func (a BackFillAccount) Cadences() (vus int, median, lo, hi time.Duration) {
	switch est := a.Estimates; {
	case a.Interval.Mode == IntervalFixed:
		return 0, a.Interval.Fixed, a.Interval.Fixed, a.Interval.Fixed
	case a.Interval.Mode == IntervalAuto && len(est) > 0:
		median = est[len(est)/2]
		if len(est)%2 == 0 {
			median = est[len(est)/2-1] + (est[len(est)/2]-est[len(est)/2-1])/2
		}
		return len(est), median, est[0], est[len(est)-1]
	}
	return 0, 0, 0, 0
}

// closedVU is a VU held by a closed-model scenario that back-fills: the
// VU, its back-fill state, its cadence estimate and its tallies, which
// only its own worker goroutine touches until the VU goes back to the
// pool.
type closedVU struct {
	VU
	fill        BackFiller
	cadence     Cadence
	unestimated int64
	// last is when the VU's previous iteration started, as its offset
	// from the run's epoch (at least 1 ns), zero when there was none or
	// it does not count toward the cadence (it did not complete
	// normally). An offset rather than a time.Time keeps the closedVU in
	// the 352-byte size class, 32 bytes less for every VU.
	last time.Duration
}

// backFillTally gathers the closedVUs' tallies as they leave the scenario.
type backFillTally struct {
	mu  sync.Mutex
	acc BackFillAccount
}

func (t *backFillTally) add(w *closedVU) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.acc.Requests += w.fill.Requests
	t.acc.Backfilled += w.fill.Filled
	t.acc.Unestimated += w.unestimated
	if t.acc.Interval.Mode == IntervalAuto {
		if est, ok := w.cadence.Estimate(); ok {
			t.acc.Estimates = append(t.acc.Estimates, est)
		}
	}
}

func (t *backFillTally) account() BackFillAccount {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.acc
	a.Estimates = slices.Clone(a.Estimates)
	slices.Sort(a.Estimates)
	return a
}
