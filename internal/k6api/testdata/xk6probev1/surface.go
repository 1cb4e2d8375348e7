package probev1

import (
	"time"

	"go.k6.io/k6/ext"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"
	k6http "go.k6.io/k6/js/modules/k6/http"
	"go.k6.io/k6/js/modulestest"
	"go.k6.io/k6/js/promises"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/netext"
	"go.k6.io/k6/lib/netext/httpext"
	"go.k6.io/k6/lib/types"
	"go.k6.io/k6/metrics"
	"go.k6.io/k6/output"
)

// The top-level names of k6's extension surface (surfaceNames in
// k6api_test.go) on the v1 module path, so the offline build fails when
// the layer's v1 tree drops or changes one; the v2 probe checks what each
// does.
var (
	_ = modules.Register
	_ modules.Module
	_ modules.Instance
	_ modules.VU
	_ modules.Exports

	_ = common.Throw
	_ = common.NewInitContextError
	_ = common.ApplyCustomUserTags
	_ = common.IsNullish
	_ *common.InitEnvironment

	_ metrics.Sample
	_ metrics.TimeSeries
	_ = metrics.PushIfNotDone

	_ = httpext.MakeRequest
	_ httpext.ParsedHTTPRequest
	_ httpext.Response
	_ = httpext.NewResponse
	_ = httpext.NewURL

	_ = modulestest.NewRuntime
	_ *metrics.Metric
	_ *metrics.Registry
	_ *metrics.TagSet
	_ metrics.SampleContainer
	_ metrics.Samples
	_ metrics.TagsAndMeta
	_ metrics.ConnectedSamples
	_ metrics.MetricType = metrics.Counter
	_ metrics.MetricType = metrics.Trend
	_ metrics.MetricType = metrics.Gauge
	_ metrics.MetricType = metrics.Rate
	_ metrics.ValueType  = metrics.Data
	_ metrics.ValueType  = metrics.Default
	_ metrics.ValueType  = metrics.Time
	_ float64            = metrics.D(time.Second)
	_ float64            = metrics.B(true)
	_ *metrics.BuiltinMetrics
	_ metrics.SystemTagSet
	_ metrics.EnabledTags
	_ = []metrics.SystemTag{metrics.TagURL, metrics.TagVU, metrics.TagIter, metrics.TagIP, metrics.TagStatus, metrics.TagScenario}
	_ metrics.Threshold
	_ metrics.Thresholds = metrics.NewThresholds(nil)
	_ metrics.Sink       = metrics.NewSink(metrics.Counter)

	_ *lib.State
	_ *lib.VUStateTags
	_ lib.DialContexter
	_ lib.Options
	_ lib.AddrResolver

	_ output.Output
	_ output.Params
	_ output.SampleBuffer
	_ = output.NewPeriodicFlusher
	_ *output.PeriodicFlusher
	_ = output.RegisterExtension
	_ output.WithThresholds

	_ types.Duration
	_ types.NullDuration = types.NewNullDuration(time.Second, true)
	_ types.NullDuration = types.NullDurationFrom(time.Second)

	_ = promises.New
	_ k6http.CookieJar
	_ = []string{netext.TLS_1_0, netext.TLS_1_1, netext.TLS_1_2, netext.TLS_1_3}
	_ = ext.Get(ext.JSExtension)
)

// The members of the surface on the v1 path, as an extension's code
// reaches them.
var _ = func(vu modules.VU, ie *common.InitEnvironment, o output.Params, s metrics.Sample, tm metrics.TagsAndMeta) []any {
	st := vu.State()
	return []any{
		vu.Context(), vu.Runtime(), vu.InitEnv(), vu.RegisterCallback, modules.Exports{Default: nil, Named: nil},
		ie.Registry, ie.Logger, ie.LookupEnv, ie.Registry.NewMetric, ie.Registry.MustNewMetric, ie.Registry.RootTagSet,
		s.Value, s.Time, s.Metadata, s.TimeSeries.Metric.Name, s.Metric.Type, s.Metric.Contains, s.Tags.Map, s.Tags.With, s.Tags.Get,
		tm.Tags, tm.Metadata, tm.SetTag, s.GetSamples, metrics.ConnectedSamples{}.Samples,
		st.Samples, st.Tags.GetCurrentValues, st.Tags.Modify, st.TLSConfig, st.Dialer.DialContext, st.Options.Throw,
		st.Options.MaxRedirects, st.Options.NoConnectionReuse, st.Options.NoVUConnectionReuse, st.Options.SystemTags.Has,
		st.Options.UserAgent, st.BuiltinMetrics.DataSent, st.BuiltinMetrics.DataReceived, st.BuiltinMetrics.HTTPReqs,
		st.BuiltinMetrics.HTTPReqDuration, st.BuiltinMetrics.Iterations, st.Logger, st.VUID, st.Iteration, st.CookieJar,
		st.GetAddrResolver, o.ConfigArgument, o.Environment, o.JSONConfig, o.Logger, (&output.SampleBuffer{}).GetBufferedSamples,
		(&output.PeriodicFlusher{}).Stop, types.Duration(0).String(), types.NullDuration{}.Valid, types.NullDuration{}.Duration,
		(&types.NullDuration{}).UnmarshalText, types.NullDuration{}.TimeDuration, k6http.CookieJar{}.Jar,
		metrics.Thresholds{}.Thresholds, metrics.Threshold{}.Source, metrics.Counter.String(), metrics.Data.String(),
	}
}

// Names beyond the surface that published extensions verified since use
// on the v1 path: the VU's dialer as k6's type, its blocked names.
var _ = func(st *lib.State) (bool, string, error) {
	d, ok := st.Dialer.(*netext.Dialer)
	pattern, _ := d.BlockedHostnames.Contains("a.test")
	_, err := types.NewHostnameTrie([]string{"*.test"})
	var _ types.NullHostnameTrie = st.Options.BlockedHostnames
	return ok, pattern, err
}

// xk6-tcp's buffer pool on the v1 path.
var _ *lib.BufferPool = lib.NewBufferPool()
