// Package metrics is k6's metrics API over metronome's metrics engine
// (see go.k6.io/k6/v2/metrics).
package metrics

import (
	"context"
	"time"

	v2 "go.k6.io/k6/v2/metrics"
)

// Metric types and value types.
type (
	MetricType = v2.MetricType
	ValueType  = v2.ValueType
)

// The kinds of metric.
const (
	Counter = v2.Counter
	Gauge   = v2.Gauge
	Trend   = v2.Trend
	Rate    = v2.Rate
)

// The value types.
const (
	Default = v2.Default
	Time    = v2.Time
	Data    = v2.Data
)

// The errors of types without a name.
var (
	ErrInvalidMetricType = v2.ErrInvalidMetricType
	ErrInvalidValueType  = v2.ErrInvalidValueType
)

// Definitions, registries and aggregation.
type (
	Metric         = v2.Metric
	Submetric      = v2.Submetric
	Sink           = v2.Sink
	Registry       = v2.Registry
	BuiltinMetrics = v2.BuiltinMetrics
	Threshold      = v2.Threshold
	Thresholds     = v2.Thresholds
)

// The sinks extensions aggregate with.
type (
	CounterSink = v2.CounterSink
	GaugeSink   = v2.GaugeSink
	TrendSink   = v2.TrendSink
	RateSink    = v2.RateSink
)

// NewSink returns an empty sink for a metric of type mt.
func NewSink(mt MetricType) Sink { return v2.NewSink(mt) }

// NewTrendSink returns an empty trend sink.
func NewTrendSink() *TrendSink { return v2.NewTrendSink() }

// GetResolversForTrendColumns returns the functions that read the named
// statistics from a TrendSink.
func GetResolversForTrendColumns(columns []string) (map[string]func(s *TrendSink) float64, error) {
	return v2.GetResolversForTrendColumns(columns)
}

// NewRegistry returns a registry of its own, outside any run.
func NewRegistry() *Registry { return v2.NewRegistry() }

// RegisterBuiltinMetrics defines k6's built-in metrics in registry.
func RegisterBuiltinMetrics(registry *Registry) *BuiltinMetrics {
	return v2.RegisterBuiltinMetrics(registry)
}

// NewThresholds returns the thresholds of the expressions sources.
func NewThresholds(sources []string) Thresholds { return v2.NewThresholds(sources) }

// Samples and their containers.
type (
	Sample                   = v2.Sample
	TimeSeries               = v2.TimeSeries
	SampleContainer          = v2.SampleContainer
	ConnectedSampleContainer = v2.ConnectedSampleContainer
	Samples                  = v2.Samples
	ConnectedSamples         = v2.ConnectedSamples
)

// GetBufferedSamples takes every container waiting in input.
func GetBufferedSamples(input <-chan SampleContainer) []SampleContainer {
	return v2.GetBufferedSamples(input)
}

// PushIfNotDone sends sample to output unless ctx is done.
func PushIfNotDone(ctx context.Context, output chan<- SampleContainer, sample SampleContainer) bool {
	return v2.PushIfNotDone(ctx, output, sample)
}

// Tags.
type (
	TagSet       = v2.TagSet
	TagsAndMeta  = v2.TagsAndMeta
	EnabledTags  = v2.EnabledTags
	SystemTag    = v2.SystemTag
	SystemTagSet = v2.SystemTagSet
)

// The system tags.
const (
	TagProto            = v2.TagProto
	TagSubproto         = v2.TagSubproto
	TagStatus           = v2.TagStatus
	TagMethod           = v2.TagMethod
	TagURL              = v2.TagURL
	TagName             = v2.TagName
	TagGroup            = v2.TagGroup
	TagCheck            = v2.TagCheck
	TagError            = v2.TagError
	TagErrorCode        = v2.TagErrorCode
	TagTLSVersion       = v2.TagTLSVersion
	TagScenario         = v2.TagScenario
	TagService          = v2.TagService
	TagExpectedResponse = v2.TagExpectedResponse
	TagIter             = v2.TagIter
	TagVU               = v2.TagVU
	TagOCSPStatus       = v2.TagOCSPStatus
	TagIP               = v2.TagIP
)

// The default system tags, and those set as metadata.
var (
	DefaultSystemTagSet    = v2.DefaultSystemTagSet
	NonIndexableSystemTags = v2.NonIndexableSystemTags
)

// SystemTagString returns the system tag named s.
func SystemTagString(s string) (SystemTag, error) { return v2.SystemTagString(s) }

// SystemTagValues lists every system tag.
func SystemTagValues() []SystemTag { return v2.SystemTagValues() }

// ToSystemTagSet returns the set of the named tags.
func ToSystemTagSet(tags []string) *SystemTagSet { return v2.ToSystemTagSet(tags) }

// NewSystemTagSet returns the set of tags.
func NewSystemTagSet(tags ...SystemTag) *SystemTagSet { return v2.NewSystemTagSet(tags...) }

// MarshalJSONWithoutHTMLEscape is json.Marshal without HTML escaping.
func MarshalJSONWithoutHTMLEscape(v any) ([]byte, error) { return v2.MarshalJSONWithoutHTMLEscape(v) }

// D converts a duration into milliseconds.
func D(d time.Duration) float64 { return v2.D(d) }

// ToD converts milliseconds back into a duration.
func ToD(d float64) time.Duration { return v2.ToD(d) }

// B is 1 for true and 0 for false.
func B(b bool) float64 { return v2.B(b) }

// The names of k6's built-in metrics.
const (
	VUsName                   = v2.VUsName
	VUsMaxName                = v2.VUsMaxName
	IterationsName            = v2.IterationsName
	IterationDurationName     = v2.IterationDurationName
	DroppedIterationsName     = v2.DroppedIterationsName
	ChecksName                = v2.ChecksName
	GroupDurationName         = v2.GroupDurationName
	HTTPReqsName              = v2.HTTPReqsName
	HTTPReqFailedName         = v2.HTTPReqFailedName
	HTTPReqDurationName       = v2.HTTPReqDurationName
	HTTPReqBlockedName        = v2.HTTPReqBlockedName
	HTTPReqConnectingName     = v2.HTTPReqConnectingName
	HTTPReqTLSHandshakingName = v2.HTTPReqTLSHandshakingName
	HTTPReqSendingName        = v2.HTTPReqSendingName
	HTTPReqWaitingName        = v2.HTTPReqWaitingName
	HTTPReqReceivingName      = v2.HTTPReqReceivingName
	WSSessionsName            = v2.WSSessionsName
	WSMessagesSentName        = v2.WSMessagesSentName
	WSMessagesReceivedName    = v2.WSMessagesReceivedName
	WSPingName                = v2.WSPingName
	WSSessionDurationName     = v2.WSSessionDurationName
	WSConnectingName          = v2.WSConnectingName
	GRPCReqDurationName       = v2.GRPCReqDurationName
	DataSentName              = v2.DataSentName
	DataReceivedName          = v2.DataReceivedName
)
