// Package watch evaluates a distributed test's abortOnFail thresholds on
// the union of its instances while it runs, in the Prometheus the
// instances remote-write to, and stops every instance through its REST
// API when one is crossed: k6's abortOnFail, for the whole test rather
// than each instance's share.
//
// The instances send trends as native histograms (the Prometheus output's
// K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM): summed over the instances
// they are the union's distribution, to within a bucket (a factor of
// 2^(2^-schema), 2^(1/8) ≈ 9% at the default schema 3). Counts are exact:
// counters and the histograms' counts add up. The exact verdict comes
// after the test, from merging the instances' result files.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/metronome-load/metronome/metrics"
)

// DefaultSettle is how long a watch waits, after the test ended, for
// runners that still answer: longer than a runner's bounded wait for its
// outputs to stop.
const DefaultSettle = 15 * time.Second

// DefaultQueryTimeout bounds each query to Prometheus, DefaultBlind how
// long the test may run without Prometheus answering any before the
// watch gives up: it cannot protect the test any more, and says so.
const (
	DefaultQueryTimeout = 10 * time.Second
	DefaultBlind        = time.Minute
)

// ErrBlind is what the error of a watch that could not read the union is:
// Prometheus answered no query for Config.Blind, or the test ended
// without a single value read. The runners were not stopped.
var ErrBlind = errors.New("the union could not be watched")

// Config is one watch.
type Config struct {
	// Prometheus is the server's base URL, http://host:9090.
	Prometheus string
	// Selector holds the PromQL label matchers that select the test's
	// series, e.g. testrun_name="metronome-test" (k6-operator tags every
	// runner's samples with it).
	Selector string
	// Runners are the base URLs of the instances' REST APIs.
	Runners []string
	// Thresholds are the thresholds to watch, keyed as
	// options.thresholds; those without AbortOnFail are left to the
	// merge.
	Thresholds map[string][]metrics.ThresholdDef
	// Registry defines the metrics the thresholds name.
	Registry *metrics.Registry
	// Interval is how often the thresholds are evaluated.
	Interval time.Duration
	// Settle bounds the wait, once every runner has ended, for the
	// runners' processes to exit: a runner reports its end before it
	// pushes its last samples, and exits after. DefaultSettle when zero.
	Settle time.Duration
	// QueryTimeout bounds each query to Prometheus (DefaultQueryTimeout
	// when zero); Blind how long the test may run without Prometheus
	// answering any query before the watch ends with ErrBlind
	// (DefaultBlind when zero).
	QueryTimeout, Blind time.Duration
	// Stdout receives a line per evaluation and the outcome.
	Stdout io.Writer
	// Now gives the time (injected for tests); time.Now when nil.
	Now func() time.Time
}

// Outcome is how a watch ended.
type Outcome struct {
	// Crossed names the thresholds that were crossed on the union
	// ("metric: expression"); the runners were then stopped.
	Crossed []string
	// Final are the thresholds' values (in the metric's unit) once the
	// test had ended, after one more evaluation; absent when no series
	// was there.
	Final map[string]float64
}

// Run watches until the runners have ended, or until an abortOnFail
// threshold is crossed on the union and the runners were stopped, or
// until ctx ends. It waits for the runners to start (the operator starts
// them paused); elapsed time, for delayAbortEval and counters' rates,
// counts from then.
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Settle <= 0 {
		cfg.Settle = DefaultSettle
	}
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.Blind <= 0 {
		cfg.Blind = DefaultBlind
	}
	var checks []*check
	var skipped []string
	keys := make([]string, 0, len(cfg.Thresholds))
	for k := range cfg.Thresholds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, d := range cfg.Thresholds[k] {
			if !d.AbortOnFail {
				continue
			}
			c, err := newCheck(cfg.Registry, k, d, cfg.Selector)
			if err != nil {
				skipped = append(skipped, err.Error())
				continue
			}
			checks = append(checks, c)
		}
	}
	if len(checks) == 0 {
		msg := "no abortOnFail threshold can be watched on the union"
		if len(skipped) > 0 {
			msg += ": " + strings.Join(skipped, "; ")
		}
		return nil, fmt.Errorf("%s", msg)
	}
	client, err := api.NewClient(api.Config{Address: cfg.Prometheus})
	if err != nil {
		return nil, fmt.Errorf("--prometheus %s: %v", cfg.Prometheus, err)
	}
	w := &watcher{cfg: cfg, prom: promv1.NewAPI(client), checks: checks, runners: newRunners(cfg.Runners)}
	fmt.Fprintf(cfg.Stdout, "watching %d abortOnFail threshold(s) on the union of %d runner(s) in %s {%s}\n",
		len(checks), len(cfg.Runners), cfg.Prometheus, cfg.Selector)
	for _, s := range skipped {
		fmt.Fprintf(cfg.Stdout, "not watched (the merge evaluates it): %s\n", s)
	}
	return w.run(ctx)
}

type watcher struct {
	cfg     Config
	prom    promv1.API
	checks  []*check
	runners *runners
	start   time.Time
	// answered is when Prometheus last answered a query; read counts the
	// values read; lastErr is the last query's error.
	answered time.Time
	read     int
	lastErr  error
}

func (w *watcher) run(ctx context.Context) (*Outcome, error) {
	tick := time.NewTicker(w.cfg.Interval)
	defer tick.Stop()
	for {
		state := w.runners.poll(ctx)
		if w.start.IsZero() && state.started {
			w.start = w.cfg.Now()
			fmt.Fprintf(w.cfg.Stdout, "the test started\n")
		}
		if !w.start.IsZero() {
			if state.ended {
				w.settle(ctx, tick)
				out := w.final(ctx)
				return out, w.blindToTheEnd()
			}
			crossed := w.evaluate(ctx)
			if err := w.blind(); err != nil {
				return nil, err
			}
			if len(crossed) > 0 {
				fmt.Fprintf(w.cfg.Stdout, "crossed on the union: %s; stopping %d runner(s)\n", strings.Join(crossed, ", "), len(w.cfg.Runners))
				if err := w.runners.stop(ctx); err != nil {
					return &Outcome{Crossed: crossed}, err
				}
				// The runners push their last samples as they stop.
				for !w.runners.poll(ctx).ended {
					select {
					case <-ctx.Done():
						return &Outcome{Crossed: crossed}, nil
					case <-tick.C:
					}
				}
				w.settle(ctx, tick)
				out := w.final(ctx)
				out.Crossed = crossed
				return out, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// blind is ErrBlind's error once Prometheus has answered no query for
// cfg.Blind since the test started or its last answer.
func (w *watcher) blind() error {
	since := w.start
	if w.answered.After(since) {
		since = w.answered
	}
	if w.cfg.Now().Sub(since) < w.cfg.Blind {
		return nil
	}
	return fmt.Errorf("%w: Prometheus at %s answered no query for %s (the last: %v); the runners go on, unwatched", ErrBlind, w.cfg.Prometheus, w.cfg.Blind, w.lastErr)
}

// blindToTheEnd is ErrBlind's error for a test that ended without one
// value read: the watch protected nothing, which its exit says.
func (w *watcher) blindToTheEnd() error {
	if w.read > 0 {
		return nil
	}
	why := "Prometheus had no series for them: check --select and that the runners remote-write native histograms"
	if w.lastErr != nil {
		why = fmt.Sprintf("the last query failed: %v", w.lastErr)
	}
	fmt.Fprintf(w.cfg.Stdout, "no threshold value was read during the whole test: nothing was watched\n")
	return fmt.Errorf("%w: no threshold value was read from %s during the whole test (%s)", ErrBlind, w.cfg.Prometheus, why)
}

// evaluate evaluates every check and returns those that fail (past their
// delayAbortEval), printing one line.
func (w *watcher) evaluate(ctx context.Context) []string {
	elapsed := w.cfg.Now().Sub(w.start)
	var parts, crossed []string
	for _, c := range w.checks {
		v, ok, err := w.value(ctx, c, elapsed)
		switch {
		case err != nil:
			parts = append(parts, fmt.Sprintf("%s %s: %v", c.Key, c.Def.Source, err))
			continue
		case !ok:
			parts = append(parts, fmt.Sprintf("%s %s: no data yet", c.Key, c.Def.Source))
			continue
		}
		mark := "✓"
		if !c.Expr.Holds(v) {
			mark = "✗"
			if elapsed >= c.Def.DelayAbortEval {
				crossed = append(crossed, c.Key+": "+c.Def.Source)
			}
		}
		parts = append(parts, fmt.Sprintf("%s %s=%s %s", c.Key, c.Expr.AggName(), format(v), mark))
	}
	fmt.Fprintf(w.cfg.Stdout, "%6.1fs  %s\n", elapsed.Seconds(), strings.Join(parts, "  "))
	return crossed
}

// settle waits until every runner that ended has exited, so that its
// last push, sent after it reported its end, is in Prometheus; a runner
// that still answers after cfg.Settle (one started with --linger) is
// named, and its last push may be missing from the final values.
func (w *watcher) settle(ctx context.Context, tick *time.Ticker) {
	deadline := w.cfg.Now().Add(w.cfg.Settle)
	for {
		left := w.runners.answering(ctx)
		if len(left) == 0 {
			return
		}
		if !w.cfg.Now().Before(deadline) {
			fmt.Fprintf(w.cfg.Stdout, "still answering %s after the test ended: %s; their last samples may be missing below\n",
				w.cfg.Settle, strings.Join(left, ", "))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// final evaluates the checks once more, once the runners' last pushes are
// in, for the record.
func (w *watcher) final(ctx context.Context) *Outcome {
	out := &Outcome{Final: map[string]float64{}}
	elapsed := w.cfg.Now().Sub(w.start)
	for _, c := range w.checks {
		if v, ok, err := w.value(ctx, c, elapsed); err == nil && ok {
			out.Final[c.Key+": "+c.Def.Source] = v
		}
	}
	for _, k := range slices.Sorted(maps.Keys(out.Final)) {
		fmt.Fprintf(w.cfg.Stdout, "at the end: %s → %s\n", k, format(out.Final[k]))
	}
	return out
}

// value queries c's value, within cfg.QueryTimeout: ok is false while
// Prometheus has no series.
func (w *watcher) value(ctx context.Context, c *check, elapsed time.Duration) (float64, bool, error) {
	qctx, cancel := context.WithTimeout(ctx, w.cfg.QueryTimeout)
	defer cancel()
	res, _, _, err := w.prom.Query(qctx, c.Query, w.cfg.Now())
	if errors.Is(err, context.DeadlineExceeded) || qctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("no answer within %s", w.cfg.QueryTimeout)
	}
	if err != nil {
		w.lastErr = err
		return 0, false, err
	}
	w.answered = w.cfg.Now()
	vec, ok := res.(model.Vector)
	if !ok || len(vec) == 0 {
		return 0, false, nil
	}
	v := float64(vec[0].Value)
	if math.IsNaN(v) {
		return 0, false, nil
	}
	v *= c.Scale
	if c.PerSecond {
		if elapsed <= 0 {
			return 0, false, nil
		}
		v /= elapsed.Seconds()
	}
	w.read++
	return v, true, nil
}

func format(v float64) string { return fmt.Sprintf("%.6g", v) }
