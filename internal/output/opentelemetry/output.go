// Package opentelemetry is the OpenTelemetry output (-o opentelemetry,
// and k6's older name -o experimental-opentelemetry). It is configured
// with k6's K6_OTEL_* variables and exports over OTLP (gRPC or HTTP) what
// k6 exports, under the same names, built with the OpenTelemetry Go SDK:
//
//   - Counter → a Float64Counter named after the metric;
//   - Gauge → a Float64Gauge;
//   - Rate → an Int64Counter <name>.total counting samples, with the
//     attribute condition=zero or condition=nonzero;
//   - Trend → a Float64Histogram: corrected_latency and schedule_lag as
//     every other trend.
//
// Time metrics have the unit ms and data metrics By; names get
// K6_OTEL_METRIC_PREFIX in front; attributes are the sample's tags (empty
// values left out); the resource carries service.name and service.version;
// the meter is named k6. Sums are cumulative unless the OTLP exporter's
// temporality variable says otherwise, as in k6.
//
// Where metronome differs: k6 aggregates trends into the SDK's default
// explicit buckets (0, 5, 10, 25 … 10000 ms), from which a percentile is
// off by up to the width of a bucket; metronome exports base-2 exponential
// histograms at scale 10 (bucket bounds a factor 2^(1/1024) apart, finer
// than the HdrHistogram summary's 1/1024), over up to 20 octaves of values
// per series (2^20: 0.06 ms to 60 s) before the SDK halves the scale.
// OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=explicit_bucket_histogram
// restores k6's buckets for dashboards that read _bucket series.
//
// The output never slows the test down: AddSamples hands the batch to the
// output's goroutine, which records it into the SDK's instruments and
// collects them every EXPORT_INTERVAL into a bounded queue; one sender
// exports from it with a timeout per export. A stalled or refusing
// receiver costs counted, reported exports (cumulative values: a later
// export carries the totals), and Stop returns within stopTimeout.
package opentelemetry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	otelmetric "go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	"google.golang.org/grpc/credentials"
)

// Names under which the output is registered: k6 v2 graduated the output
// to "opentelemetry" and keeps the experimental name with a warning.
const (
	Name             = "opentelemetry"
	ExperimentalName = "experimental-opentelemetry"
)

func init() {
	output.Register(Name, New)
	output.Register(ExperimentalName, func(p output.Params) (output.Output, error) {
		if p.Logf != nil {
			p.Logf("-o %s is k6's older name of the OpenTelemetry output; -o %s is the same output", ExperimentalName, Name)
		}
		return New(p)
	})
}

// Exponential histograms: scale 10 puts 1024 buckets in every octave, each
// at most 2^(1/1024)-1 ≈ 0.068% wide, finer than metrics.TrendSink's
// buckets (1/1024 ≈ 0.098% of their value); maxBuckets keeps that scale
// over 20 octaves, about 160 KB per series at most.
const (
	expScale   = 10
	maxBuckets = 20 << expScale
)

// Limits of the output's buffers and of its stop.
const (
	// inputBuffer is how many batches may wait for the recorder.
	inputBuffer = 1024
	// queueLimit is how many collected exports may wait for the sender.
	queueLimit = 8
	// exportTimeout bounds one export, retries included.
	exportTimeout = 10 * time.Second
	// stopTimeout is how long Stop lets the sender deliver what is
	// queued, the final export included.
	stopTimeout = 10 * time.Second
)

// Output is the OpenTelemetry output.
type Output struct {
	cfg     Config
	secrets []string
	logf    func(format string, args ...any)

	exporter sdkmetric.Exporter
	reader   *sdkmetric.ManualReader
	provider *sdkmetric.MeterProvider
	meter    otelmetric.Meter

	loop     *output.Loop
	queue    *output.Queue[*metricdata.ResourceMetrics]
	sendDone chan struct{}

	// Owned by the loop's goroutine.
	instruments map[*metrics.Metric]instrument
	attrs       map[*metrics.TagSet]*attrOptions
	failedNames map[string]bool

	stopCtx    context.Context
	cancelStop context.CancelFunc
	// exportTimeout and stopTimeout are the constants; tests shorten them.
	exportTimeout, stopTimeout time.Duration

	// Owned by the sender; read after sendDone closes.
	exports, failedExports, failedPoints int
	firstErr                             error
}

// instrument records the samples of one metric.
type instrument struct {
	counter otelmetric.Float64Counter
	gauge   otelmetric.Float64Gauge
	hist    otelmetric.Float64Histogram
	rate    otelmetric.Int64Counter
}

// attrOptions are the recording options of one tag set: its attributes,
// and for rates the same plus condition=zero or nonzero.
type attrOptions struct {
	plain, zero, nonzero otelmetric.MeasurementOption
}

// New builds the output from the K6_OTEL_* variables in p.Env.
func New(p output.Params) (output.Output, error) {
	version := p.Version
	if version == "" {
		version = "dev"
	}
	cfg, err := ParseConfig(p.Env, version)
	if err != nil {
		return nil, errors.New(output.Redact(err.Error(), cfg.secrets()...))
	}
	o := &Output{
		cfg:           cfg,
		secrets:       cfg.secrets(),
		queue:         output.NewQueue[*metricdata.ResourceMetrics](queueLimit),
		sendDone:      make(chan struct{}),
		instruments:   map[*metrics.Metric]instrument{},
		attrs:         map[*metrics.TagSet]*attrOptions{},
		failedNames:   map[string]bool{},
		exportTimeout: exportTimeout,
		stopTimeout:   stopTimeout,
	}
	logf := p.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	o.logf = func(format string, args ...any) {
		logf("%s", output.Redact(fmt.Sprintf(format, args...), o.secrets...))
	}
	o.loop = output.NewLoop(inputBuffer, cfg.ExportInterval, output.LoopSteps{
		Ingest: o.ingest,
		Tick:   func() { o.collect(false) },
		Final:  o.final,
	})
	return o, nil
}

// Description is shown in the banner, as k6 shows it.
func (o *Output) Description() string {
	return "opentelemetry (" + o.cfg.endpoint() + ")"
}

// Start builds the exporter and the meter provider and starts the
// recorder and the sender. Nothing connects yet: gRPC dials lazily.
func (o *Output) Start() error {
	exp, err := o.newExporter()
	if err != nil {
		return errors.New(output.Redact(fmt.Sprintf("opentelemetry: %v", err), o.secrets...))
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", o.cfg.ServiceName),
		attribute.String("service.version", o.cfg.ServiceVersion),
	))
	if err != nil {
		return fmt.Errorf("opentelemetry: the resource: %w", err)
	}
	o.exporter = exp
	o.reader = sdkmetric.NewManualReader(
		sdkmetric.WithTemporalitySelector(exp.Temporality),
		sdkmetric.WithAggregationSelector(o.aggregation),
	)
	o.provider = sdkmetric.NewMeterProvider(
		sdkmetric.WithResource(res),
		sdkmetric.WithReader(o.reader),
		// No traces run through a test's samples; skip the exemplar
		// machinery on every recording.
		sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter),
	)
	o.meter = o.provider.Meter("k6")
	o.stopCtx, o.cancelStop = context.WithCancel(context.Background())
	o.loop.Start()
	go o.send()
	return nil
}

// aggregation is the exporter's, but for histograms, which are
// exponential at expScale unless the user asked for k6's explicit
// buckets.
func (o *Output) aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	if k == sdkmetric.InstrumentKindHistogram && o.cfg.Histogram == histogramExponential {
		return sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: maxBuckets, MaxScale: expScale}
	}
	if k == sdkmetric.InstrumentKindHistogram {
		return sdkmetric.DefaultAggregationSelector(k)
	}
	return o.exporter.Aggregation(k)
}

func (o *Output) newExporter() (sdkmetric.Exporter, error) {
	ctx := context.Background()
	tlsCfg, err := o.cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	headers := o.cfg.headers()
	if o.cfg.Protocol == protocolHTTP {
		opts := []otlpmetrichttp.Option{
			otlpmetrichttp.WithEndpoint(o.cfg.HTTPEndpoint),
			otlpmetrichttp.WithURLPath(o.cfg.HTTPURLPath),
			otlpmetrichttp.WithTimeout(exportTimeout),
		}
		if o.cfg.HTTPInsecure {
			opts = append(opts, otlpmetrichttp.WithInsecure())
		}
		if len(headers) > 0 {
			opts = append(opts, otlpmetrichttp.WithHeaders(headers))
		}
		if tlsCfg != nil {
			opts = append(opts, otlpmetrichttp.WithTLSClientConfig(tlsCfg))
		}
		return otlpmetrichttp.New(ctx, opts...)
	}
	opts := []otlpmetricgrpc.Option{
		otlpmetricgrpc.WithEndpoint(o.cfg.GRPCEndpoint),
		otlpmetricgrpc.WithTimeout(exportTimeout),
	}
	if o.cfg.GRPCInsecure {
		opts = append(opts, otlpmetricgrpc.WithInsecure())
	}
	if len(headers) > 0 {
		opts = append(opts, otlpmetricgrpc.WithHeaders(headers))
	}
	if tlsCfg != nil {
		opts = append(opts, otlpmetricgrpc.WithTLSCredentials(credentials.NewTLS(tlsCfg)))
	}
	return otlpmetricgrpc.New(ctx, opts...)
}

// AddSamples hands the batch to the recorder without waiting; when the
// recorder is that far behind, the batch is counted as dropped.
func (o *Output) AddSamples(batch []metrics.Sample) { o.loop.AddSamples(batch) }

// Stop exports what is left, within stopTimeout, and reports what was
// lost. It returns an error when samples never reached the recorder (the
// totals exported lack them).
func (o *Output) Stop() error {
	return o.loop.Stop(0, func(bool) error {
		timer := time.AfterFunc(o.stopTimeout, o.cancelStop)
		<-o.sendDone
		timer.Stop()
		o.cancelStop()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = o.provider.Shutdown(ctx)
		_ = o.exporter.Shutdown(ctx)
		cancel()
		o.report()
		if n := o.loop.Dropped(); n > 0 {
			return fmt.Errorf("opentelemetry: %d samples were dropped because the output's buffer was full; the totals exported lack them", n)
		}
		return nil
	})
}

// report logs what the receiver did not get.
func (o *Output) report() {
	if exports, points := o.queue.Dropped(); exports > 0 {
		o.logf("opentelemetry: %d exports (%d data points) were dropped because the receiver did not keep up; values are cumulative, so later exports carry their totals",
			exports, points)
	}
	if o.failedExports > 0 {
		o.logf("opentelemetry: %d of %d exports (%d data points) were not delivered to %s; first error: %v",
			o.failedExports, o.exports, o.failedPoints, o.cfg.endpoint(), o.firstErr)
	}
}

// ingest records a batch into the instruments.
func (o *Output) ingest(batch []metrics.Sample) {
	ctx := context.Background()
	for i := range batch {
		smp := &batch[i]
		if smp.Metric == nil {
			continue
		}
		in, ok := o.instrument(smp.Metric)
		if !ok {
			continue
		}
		tags := smp.Tags
		if tags == nil {
			tags = metrics.EmptyTags
		}
		a := o.attrOptions(tags)
		switch {
		case in.counter != nil:
			in.counter.Add(ctx, smp.Value, a.plain)
		case in.gauge != nil:
			in.gauge.Record(ctx, smp.Value, a.plain)
		case in.hist != nil:
			in.hist.Record(ctx, smp.Value, a.plain)
		case smp.Value != 0:
			in.rate.Add(ctx, 1, a.nonzero)
		default:
			in.rate.Add(ctx, 1, a.zero)
		}
	}
}

// instrument returns the instrument of m, making it on first use; ok is
// false when the SDK refused it (reported once).
func (o *Output) instrument(m *metrics.Metric) (instrument, bool) {
	if in, ok := o.instruments[m]; ok {
		return in, true
	}
	name := o.cfg.MetricPrefix + m.Name
	var unit string
	switch m.Contains {
	case metrics.Time:
		unit = "ms"
	case metrics.Data:
		unit = "By"
	}
	var in instrument
	var err error
	switch m.Type {
	case metrics.Counter:
		in.counter, err = o.meter.Float64Counter(name, otelmetric.WithUnit(unit))
	case metrics.Gauge:
		in.gauge, err = o.meter.Float64Gauge(name, otelmetric.WithUnit(unit))
	case metrics.Trend:
		in.hist, err = o.meter.Float64Histogram(name, otelmetric.WithUnit(unit))
	case metrics.Rate:
		name += ".total"
		in.rate, err = o.meter.Int64Counter(name)
	default:
		err = fmt.Errorf("metric type %v", m.Type)
	}
	if err != nil {
		if !o.failedNames[name] {
			o.failedNames[name] = true
			o.logf("opentelemetry: the metric %s is not exported: %v", name, err)
		}
		return instrument{}, false
	}
	o.instruments[m] = in
	return in, true
}

// attrOptions returns the recording options of a tag set, made once.
func (o *Output) attrOptions(tags *metrics.TagSet) *attrOptions {
	if a, ok := o.attrs[tags]; ok {
		return a
	}
	kvs := make([]attribute.KeyValue, 0, tags.Len()+1)
	tags.Range(func(k, v string) bool {
		if k != "" && v != "" {
			kvs = append(kvs, attribute.String(k, v))
		}
		return true
	})
	n := len(kvs)
	a := &attrOptions{
		plain:   otelmetric.WithAttributeSet(attribute.NewSet(kvs...)),
		zero:    otelmetric.WithAttributeSet(attribute.NewSet(append(kvs[:n:n], attribute.String("condition", "zero"))...)),
		nonzero: otelmetric.WithAttributeSet(attribute.NewSet(append(kvs[:n:n], attribute.String("condition", "nonzero"))...)),
	}
	o.attrs[tags] = a
	return a
}

// collect queues the current state of every instrument as one export.
func (o *Output) collect(final bool) {
	rm := &metricdata.ResourceMetrics{}
	if err := o.reader.Collect(context.Background(), rm); err != nil {
		o.logf("opentelemetry: collecting the metrics: %v", err)
		return
	}
	points := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			points += dataPoints(m.Data)
		}
	}
	if points > 0 {
		o.queue.Push(rm, 1, points, final)
	}
}

// dataPoints counts the data points of an aggregation.
func dataPoints(d metricdata.Aggregation) int {
	switch d := d.(type) {
	case metricdata.Sum[float64]:
		return len(d.DataPoints)
	case metricdata.Sum[int64]:
		return len(d.DataPoints)
	case metricdata.Gauge[float64]:
		return len(d.DataPoints)
	case metricdata.Histogram[float64]:
		return len(d.DataPoints)
	case metricdata.ExponentialHistogram[float64]:
		return len(d.DataPoints)
	}
	return 1
}

// final queues the last export after every batch was recorded.
func (o *Output) final() {
	o.collect(true)
	o.queue.Close()
}

// send exports queued collections in order, one at a time.
func (o *Output) send() {
	defer close(o.sendDone)
	for {
		rm, points, ok := o.queue.Pop()
		if !ok {
			return
		}
		o.exports++
		err := o.stopCtx.Err()
		if err != nil {
			err = fmt.Errorf("stopped before the export could be sent: %w", err)
		} else {
			ctx, cancel := context.WithTimeout(o.stopCtx, o.exportTimeout)
			err = o.exporter.Export(ctx, rm)
			cancel()
		}
		if err == nil {
			continue
		}
		o.failedExports++
		o.failedPoints += points
		if o.firstErr == nil {
			o.firstErr = err
			o.logf("opentelemetry: an export to %s failed, later failures are counted and reported at the end: %v", o.cfg.endpoint(), err)
		}
	}
}
