// Package prometheus is the Prometheus remote-write output
// (-o experimental-prometheus-rw, alias -o prometheus). It is configured
// with k6's K6_PROMETHEUS_RW_* variables and names series exactly as k6
// does, so Grafana's k6 dashboards (19665 for trend stats, 18030 for native
// histograms) work unchanged, and corrected_latency and schedule_lag are
// exported like every other trend:
//
//   - Counter → k6_<name>_total, the running sum.
//   - Gauge → k6_<name>, the last value.
//   - Rate → k6_<name>_rate, non-zero values / all values so far.
//   - Trend → one gauge per TREND_STATS entry, k6_<name>_<stat> with
//     p(99) → p99, p(99.9) → p999; or, with TREND_AS_NATIVE_HISTOGRAM, a
//     native histogram (schema 3, or NATIVE_HISTOGRAM_SCHEMA) k6_<name>_seconds for time trends,
//     k6_<name>_bytes for data trends, k6_<name> otherwise.
//
// Time values are converted to seconds. Labels are the sample's tags
// (empty values skipped); metadata (vu, iter) never becomes a label, as in
// k6. corrected_latency is recorded per request with the tags of the
// request's own duration metric, so its series carry http_req_duration's
// labels (plus backfilled=true, or outcome=dropped|interrupted) and
// histogram_quantile(0.99, sum by (name) (k6_corrected_latency_seconds))
// is each endpoint's corrected p99.
//
// Every value is cumulative since the start of the test, as in k6: the
// trend gauges are the stats of all samples of the series so far, not of
// the last push interval. A trend series is kept as an HdrHistogram
// (metrics.TrendSink) or as sparse native-histogram buckets, so memory per
// series is bounded however long the test runs.
//
// The output never slows the test down: AddSamples only hands the batch to
// the output's goroutine (and counts the samples as dropped if its buffer
// is full); the aggregated series are pushed every PUSH_INTERVAL by a
// separate sender that retries with backoff, keeps at most a bounded queue
// of pushes (dropping the oldest: since values are cumulative, a lost push
// costs resolution, not totals), and gives up at stop after a bounded time.
// Everything lost is counted and reported at Stop.
package prometheus

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/prometheus/prompb"
)

// Names under which the output is registered.
const (
	Name  = "experimental-prometheus-rw"
	Alias = "prometheus"
)

func init() {
	output.Register(Name, New)
	output.Register(Alias, New)
}

// Limits of the output's buffers and of its stop.
const (
	// inputBuffer is how many batches may wait for the aggregator.
	inputBuffer = 1024
	// queueLimit is how many pushes may wait for the sender.
	queueLimit = 32
	// requestTimeout bounds one HTTP request, as k6's default timeout.
	requestTimeout = 5 * time.Second
	// stopBacklogTimeout is how long Stop lets the sender deliver pushes
	// queued before the final one.
	stopBacklogTimeout = 5 * time.Second
	// finalPushTimeout is how long Stop lets the final push (and the stale
	// markers), retries included, take after the backlog.
	finalPushTimeout = 5 * time.Second
)

// Output is the remote-write output.
type Output struct {
	cfg       Config
	secrets   []string // quoted nowhere: see Config.secrets
	stats     []trendStat
	logf      func(format string, args ...any)
	now       func() time.Time
	transport http.RoundTripper // nil: a default transport; tests inject one
	api       *remote.API

	// loop runs the aggregator: it folds batches into series, queues a
	// push every PUSH_INTERVAL and the final push at Stop.
	loop     *output.Loop
	sendDone chan struct{}

	// Owned by the aggregator goroutine.
	series map[seriesKey]*series
	order  []*series
	names  *labelNames

	queue *output.Queue[request]

	// backlogCtx is cancelled stopBacklogTimeout after Stop begins.
	backlogCtx    context.Context
	cancelBacklog context.CancelFunc

	// Owned by the sender goroutine; read after sendDone closes.
	pushes, failedPushes, failedValues, retries int
	firstErr                                    error
	nativeRejected                              bool
	finalCtx                                    context.Context
	cancelFinal                                 context.CancelFunc
}

// New builds the output from K6_PROMETHEUS_RW_* variables in p.Env.
func New(p output.Params) (output.Output, error) {
	return newOutput(p, nil)
}

func newOutput(p output.Params, transport http.RoundTripper) (*Output, error) {
	cfg, err := ParseConfig(p.Env, p.Arg)
	if err != nil {
		return nil, err
	}
	o := &Output{
		cfg:       cfg,
		secrets:   cfg.secrets(),
		now:       p.Now,
		transport: transport,
		sendDone:  make(chan struct{}),
		series:    map[seriesKey]*series{},
		queue:     output.NewQueue[request](queueLimit),
	}
	logf := p.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	// Every message goes out without the credentials it may quote.
	o.logf = func(format string, args ...any) {
		logf("%s", output.Redact(fmt.Sprintf(format, args...), o.secrets...))
	}
	if o.now == nil {
		o.now = time.Now
	}
	o.loop = output.NewLoop(inputBuffer, cfg.PushInterval, output.LoopSteps{
		Ingest: o.ingest,
		Tick:   func() { o.flush(false) },
		Final:  o.final,
	})
	o.names = newLabelNames(o.logf)
	for _, s := range cfg.TrendStats {
		st, err := parseTrendStat(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envTrendStats, err)
		}
		o.stats = append(o.stats, st)
	}
	return o, nil
}

// Description is shown in the banner.
func (o *Output) Description() string {
	return fmt.Sprintf("Prometheus remote write (%s)", o.cfg.RedactedURL())
}

// Start starts the aggregator and the sender.
func (o *Output) Start() error {
	base := o.transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		if o.cfg.InsecureSkipTLSVerify {
			t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user asked for it
		}
		base = t
	}
	client := &http.Client{
		Timeout:   requestTimeout,
		Transport: &authTransport{base: base, cfg: o.cfg},
	}
	maxBackoff := min(o.cfg.PushInterval, requestTimeout)
	api, err := remote.NewAPI(o.cfg.ServerURL,
		remote.WithAPIPath(""),
		remote.WithAPIHTTPClient(client),
		remote.WithAPIBackoff(remote.BackoffConfig{Min: 250 * time.Millisecond, Max: max(maxBackoff, 250*time.Millisecond), MaxRetries: 3}),
	)
	if err != nil {
		return errors.New(output.Redact(fmt.Sprintf("%s: %v", envServerURL, err), o.secrets...))
	}
	o.api = api
	o.backlogCtx, o.cancelBacklog = context.WithCancel(context.Background())
	o.loop.Start()
	go o.send()
	return nil
}

// AddSamples hands the batch to the aggregator without waiting; when the
// aggregator is that far behind, the batch is counted as dropped.
func (o *Output) AddSamples(batch []metrics.Sample) { o.loop.AddSamples(batch) }

// Stop pushes what is left and reports what was lost. It returns within
// about stopBacklogTimeout + finalPushTimeout however the server behaves,
// and an error when samples never reached the aggregator (the totals sent
// lack them).
func (o *Output) Stop() error {
	return o.loop.Stop(0, func(bool) error {
		timer := time.AfterFunc(stopBacklogTimeout, o.cancelBacklog)
		<-o.sendDone
		timer.Stop()
		o.cancelBacklog()
		if o.cancelFinal != nil {
			o.cancelFinal()
		}
		o.report()
		if n := o.loop.Dropped(); n > 0 {
			return fmt.Errorf("prometheus remote write: %d samples were dropped because the output's buffer was full; the totals sent lack them", n)
		}
		return nil
	})
}

// report logs what the server did not receive. Lost pushes are warnings
// only: values are cumulative, so a later push carries their totals.
func (o *Output) report() {
	if pushes, values := o.queue.Dropped(); pushes > 0 {
		o.logf("prometheus remote write: %d pushes (%d values) were dropped because the server did not keep up; values are cumulative, so later pushes carry their totals",
			pushes, values)
	}
	if o.failedPushes > 0 {
		o.logf("prometheus remote write: %d of %d pushes (%d values) were not delivered to %s (%d retries); first error: %v",
			o.failedPushes, o.pushes, o.failedValues, o.cfg.RedactedURL(), o.retries, o.firstErr)
	}
}

// final queues the last push, and the stale markers when asked for, after
// the aggregator took every queued batch; the sender ends after them.
func (o *Output) final() {
	o.flush(true)
	if o.cfg.StaleMarkers {
		o.staleMarkers()
	}
	o.queue.Close()
}

func (o *Output) ingest(batch []metrics.Sample) {
	var nowMs int64
	for i := range batch {
		smp := &batch[i]
		if smp.Metric == nil {
			continue
		}
		tags := smp.Tags
		if tags == nil {
			tags = metrics.EmptyTags
		}
		k := seriesKey{smp.Metric, tags}
		s := o.series[k]
		if s == nil {
			s = newSeries(k, o.cfg.TrendAsNativeHistogram, o.cfg.NativeHistogramSchema, o.names)
			o.series[k] = s
			o.order = append(o.order, s)
		}
		var ms int64
		if smp.Time.IsZero() {
			if nowMs == 0 {
				nowMs = o.now().UnixMilli()
			}
			ms = nowMs
		} else {
			ms = smp.Time.UnixMilli()
		}
		s.add(smp.Value, ms)
	}
}

// flush queues the current value of every series that changed since the
// last flush: floats and native histograms in separate requests, so that a
// server without native-histogram support still stores the floats.
func (o *Output) flush(final bool) {
	floats := &prompb.WriteRequest{}
	hists := &prompb.WriteRequest{}
	for _, s := range o.order {
		if !s.dirty {
			continue
		}
		s.dirty = false
		ts := s.nextTimestamp()
		if s.native != nil {
			hists.Timeseries = append(hists.Timeseries, prompb.TimeSeries{
				Labels:     s.withName(histogramName(s.metric)),
				Histograms: []prompb.Histogram{s.native.proto(ts)},
			})
			continue
		}
		s.floats(o.stats, func(name string, v float64) {
			floats.Timeseries = append(floats.Timeseries, prompb.TimeSeries{
				Labels:  s.withName(name),
				Samples: []prompb.Sample{{Value: v, Timestamp: ts}},
			})
		})
	}
	if n := len(floats.Timeseries); n > 0 {
		o.queue.Push(request{msg: floats, values: n, final: final}, 1, n, final)
	}
	if n := len(hists.Timeseries); n > 0 {
		o.queue.Push(request{msg: hists, values: n, hist: true, final: final}, 1, n, final)
	}
}

// staleMarkers queues a staleness marker for every series, so that
// Prometheus ends them now instead of 5 minutes after their last value.
func (o *Output) staleMarkers() {
	floats := &prompb.WriteRequest{}
	hists := &prompb.WriteRequest{}
	nowMs := o.now().UnixMilli()
	for _, s := range o.order {
		ts := max(s.sent+1, nowMs)
		s.sent = ts
		req := floats
		if s.native != nil {
			req = hists
		}
		for _, name := range s.outputNames(o.stats) {
			req.Timeseries = append(req.Timeseries, prompb.TimeSeries{
				Labels:  s.withName(name),
				Samples: []prompb.Sample{{Value: staleNaN, Timestamp: ts}},
			})
		}
	}
	if n := len(floats.Timeseries); n > 0 {
		o.queue.Push(request{msg: floats, values: n, final: true}, 1, n, true)
	}
	if n := len(hists.Timeseries); n > 0 {
		o.queue.Push(request{msg: hists, values: n, hist: true, final: true}, 1, n, true)
	}
}

// send delivers queued pushes in order, one at a time, so that every series
// reaches the server in timestamp order.
func (o *Output) send() {
	defer close(o.sendDone)
	for {
		r, _, ok := o.queue.Pop()
		if !ok {
			return
		}
		o.deliver(r)
	}
}

func (o *Output) deliver(r request) {
	o.pushes++
	fail := func(err error) {
		o.failedPushes++
		o.failedValues += r.values
		if o.firstErr == nil {
			o.firstErr = err
			o.logf("prometheus remote write: a push to %s failed, later failures are counted and reported at the end: %v", o.cfg.RedactedURL(), err)
		}
	}
	if r.hist && o.nativeRejected {
		fail(errNativeDisabled)
		return
	}
	ctx := o.backlogCtx
	if r.final {
		if o.finalCtx == nil {
			o.finalCtx, o.cancelFinal = context.WithTimeout(context.Background(), finalPushTimeout)
		}
		ctx = o.finalCtx
	}
	if err := ctx.Err(); err != nil {
		fail(fmt.Errorf("stopped before the push could be sent: %w", err))
		return
	}
	_, err := o.api.Write(ctx, remote.WriteV1MessageType, r.msg,
		remote.WithWriteRetryCallback(func(error) { o.retries++ }))
	if err == nil {
		return
	}
	if r.hist && isNativeDisabled(err) {
		o.nativeRejected = true
		err = errNativeDisabled
	}
	fail(err)
}

// authTransport adds the configured headers and credentials to every
// request.
type authTransport struct {
	base http.RoundTripper
	cfg  Config
}

func (t *authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c := t.cfg
	if len(c.Headers) == 0 && c.Username == "" && c.BearerToken == "" {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range c.Headers {
		r.Header.Set(k, v)
	}
	if c.Username != "" {
		r.SetBasicAuth(c.Username, c.Password)
	}
	if c.BearerToken != "" {
		r.Header.Set("Authorization", "Bearer "+c.BearerToken)
	}
	return t.base.RoundTrip(r)
}
