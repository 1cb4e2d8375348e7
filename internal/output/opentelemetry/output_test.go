package opentelemetry

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/logtest"
	"github.com/metronome-load/metronome/internal/testkit/otlptest"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
)

type logs = logtest.Lines

// start builds and starts an output with env on top of an insecure
// exporter pointed at rcv over protocol.
func start(t *testing.T, rcv *otlptest.Receiver, protocol string, env map[string]string) (*Output, *logs) {
	t.Helper()
	e := map[string]string{
		"K6_OTEL_EXPORTER_PROTOCOL":      protocol,
		"K6_OTEL_GRPC_EXPORTER_ENDPOINT": rcv.GRPCAddr, "K6_OTEL_GRPC_EXPORTER_INSECURE": "true",
		"K6_OTEL_HTTP_EXPORTER_ENDPOINT": rcv.HTTPAddr, "K6_OTEL_HTTP_EXPORTER_INSECURE": "true",
		"K6_OTEL_EXPORT_INTERVAL": "100ms",
	}
	for k, v := range env {
		e[k] = v
	}
	l := &logs{}
	o, err := New(output.Params{Env: e, Logf: l.Logf, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	return o.(*Output), l
}

func TestRegistered(t *testing.T) {
	for _, n := range []string{Name, ExperimentalName} {
		if _, ok := output.Lookup(n); !ok {
			t.Errorf("%s is not registered", n)
		}
	}
}

// TestBothProtocols exports one sample of each metric type over gRPC and
// over HTTP and checks names, kinds, units, attributes, the resource, the
// headers and the values.
func TestBothProtocols(t *testing.T) {
	for _, protocol := range []string{protocolGRPC, protocolHTTP} {
		t.Run(protocol, func(t *testing.T) {
			rcv := otlptest.Start(t)
			b := metrics.RegisterBuiltin(metrics.NewRegistry())
			o, l := start(t, rcv, protocol, map[string]string{
				"K6_OTEL_HEADERS":                "X-Scope-OrgID=team%201,x-api-key=s3cret",
				"K6_OTEL_SERVICE_NAME":           "checkout-load",
				"K6_OTEL_METRIC_PREFIX":          "k6_",
				"K6_OTEL_HTTP_EXPORTER_USERNAME": "bob",
				"K6_OTEL_HTTP_EXPORTER_PASSWORD": "hunter2pw",
			})
			tags := metrics.NewTags(map[string]string{"scenario": "s", "group": "", "status": "200"})
			now := time.Now()
			o.AddSamples([]metrics.Sample{
				{Metric: b.HTTPReqs, Tags: tags, Time: now, Value: 1},
				{Metric: b.HTTPReqs, Tags: tags, Time: now, Value: 1},
				{Metric: b.VUs, Tags: metrics.EmptyTags, Time: now, Value: 7},
				{Metric: b.HTTPReqFailed, Tags: tags, Time: now, Value: 1},
				{Metric: b.HTTPReqFailed, Tags: tags, Time: now, Value: 0},
				{Metric: b.CorrectedLatency, Tags: tags, Time: now, Value: 12.5},
				{Metric: b.DataSent, Tags: tags, Time: now, Value: 300},
			})
			if err := o.Stop(); err != nil {
				t.Fatal(err)
			}
			if l.String() != "" {
				t.Errorf("log: %s", l)
			}
			got := map[string]otlptest.Point{}
			for _, p := range rcv.Points() {
				got[p.Metric+" "+p.Attrs["condition"]] = p
			}
			want := map[string]struct {
				kind, unit string
				value      float64
			}{
				"k6_http_reqs ":                    {"sum", "", 2},
				"k6_vus ":                          {"gauge", "", 7},
				"k6_http_req_failed.total nonzero": {"sum", "", 1},
				"k6_http_req_failed.total zero":    {"sum", "", 1},
				"k6_corrected_latency ":            {"exponential_histogram", "ms", 12.5},
				"k6_data_sent ":                    {"sum", "By", 300},
			}
			for key, w := range want {
				p, ok := got[key]
				if !ok {
					t.Errorf("no %s; got %v", key, got)
					continue
				}
				v := p.Value
				if p.Kind == "exponential_histogram" {
					v = p.Sum
				}
				if p.Kind != w.kind || p.Unit != w.unit || v != w.value {
					t.Errorf("%s: %s %q %v, want %s %q %v", key, p.Kind, p.Unit, v, w.kind, w.unit, w.value)
				}
				if key != "k6_vus " && (p.Attrs["scenario"] != "s" || p.Attrs["status"] != "200" || p.Attrs["group"] != "") {
					t.Errorf("%s: attributes %v", key, p.Attrs)
				}
				if _, has := p.Attrs["group"]; has {
					t.Errorf("%s: the empty tag group became an attribute", key)
				}
				if p.Resource["service.name"] != "checkout-load" || p.Resource["service.version"] != "1.2.3" || p.Scope != "k6" {
					t.Errorf("%s: resource %v, scope %q", key, p.Resource, p.Scope)
				}
			}
			h := rcv.Headers()[0]
			if h["x-scope-orgid"] != "team 1" || h["x-api-key"] != "s3cret" || h["authorization"] != "Basic Ym9iOmh1bnRlcjJwdw==" {
				t.Errorf("headers %v", h)
			}
		})
	}
}

// TestExponentialPrecision records a long-tailed distribution and checks
// that every quantile read from the exported exponential histogram lies
// within one bucket (a factor 2^(1/1024)) of the HdrHistogram summary's,
// and that explicit_bucket_histogram gives k6's explicit buckets instead.
func TestExponentialPrecision(t *testing.T) {
	rcv := otlptest.Start(t)
	b := metrics.RegisterBuiltin(metrics.NewRegistry())
	o, _ := start(t, rcv, protocolGRPC, nil)
	sink := metrics.NewTrendSink()
	rng := rand.New(rand.NewPCG(1, 2))
	batch := make([]metrics.Sample, 0, 50_000)
	for range cap(batch) {
		v := 20 * math.Exp(rng.NormFloat64()*0.7)
		if rng.Float64() < 0.02 {
			v += rng.Float64() * 3000
		}
		sink.AddValue(v)
		batch = append(batch, metrics.Sample{Metric: b.CorrectedLatency, Tags: metrics.EmptyTags, Time: time.Now(), Value: v})
	}
	o.AddSamples(batch)
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	pts := rcv.Points()
	p := pts[len(pts)-1]
	if p.Exp == nil || p.Exp.Scale != expScale || p.Count != uint64(len(batch)) {
		t.Fatalf("last point %s, scale %d, count %d", p.Kind, p.Exp.GetScale(), p.Count)
	}
	base := math.Exp2(math.Exp2(-expScale))
	counts := p.Exp.Positive.BucketCounts
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		// The bucket holding the rank-q value: (base^i, base^(i+1)].
		rank := uint64(math.Ceil(q * float64(p.Count)))
		var seen uint64
		i := 0
		for ; i < len(counts); i++ {
			seen += counts[i]
			if seen >= rank {
				break
			}
		}
		idx := int(p.Exp.Positive.Offset) + i
		lo, hi := math.Pow(base, float64(idx)), math.Pow(base, float64(idx+1))
		want := sink.Percentile(q * 100)
		t.Logf("p%g: bucket (%.4f, %.4f] ms, HdrHistogram %.4f ms", q*100, lo, hi, want)
		// The summary's value may sit in a neighbouring bucket: its own
		// precision is 0.05%, and its estimator interpolates ranks.
		if want < lo/(base*1.0005) || want > hi*base*1.0005 {
			t.Errorf("p%g: HdrHistogram %.4f ms outside the exported bucket (%.4f, %.4f] by more than a bucket", q*100, want, lo, hi)
		}
	}

	rcv2 := otlptest.Start(t)
	o2, _ := start(t, rcv2, protocolHTTP, map[string]string{envHistogram: histogramExplicit})
	o2.AddSamples(batch[:10])
	if err := o2.Stop(); err != nil {
		t.Fatal(err)
	}
	if pts := rcv2.Points(); len(pts) == 0 || pts[len(pts)-1].Kind != "histogram" {
		t.Errorf("with %s=%s: %v", envHistogram, histogramExplicit, pts)
	}
}

// TestStallingAndRefusingReceivers checks that a receiver that never
// answers or refuses every export neither blocks AddSamples nor holds Stop
// past its budget, and that the loss is counted and reported without the
// headers' secrets.
func TestStallingAndRefusingReceivers(t *testing.T) {
	for name, mode := range map[string]otlptest.Mode{"stall": otlptest.Stall, "refuse": otlptest.Refuse} {
		t.Run(name, func(t *testing.T) {
			rcv := otlptest.Start(t)
			rcv.SetMode(mode)
			b := metrics.RegisterBuiltin(metrics.NewRegistry())
			o, l := start(t, rcv, protocolGRPC, map[string]string{"K6_OTEL_EXPORT_INTERVAL": "20ms", "K6_OTEL_HEADERS": "Authorization=Bearer%20t0psecret"})
			o.exportTimeout, o.stopTimeout = 200*time.Millisecond, time.Second
			tags := metrics.NewTags(map[string]string{"scenario": "s"})
			for i := range 100 {
				before := time.Now()
				o.AddSamples([]metrics.Sample{{Metric: b.HTTPReqDuration, Tags: tags, Time: before, Value: float64(i)}})
				if d := time.Since(before); d > 100*time.Millisecond {
					t.Errorf("AddSamples blocked for %v", d)
				}
				time.Sleep(5 * time.Millisecond)
			}
			stopAt := time.Now()
			if err := o.Stop(); err != nil {
				t.Fatal(err)
			}
			// Stop's budget, plus the SDK's shutdown (1 s at most) and a
			// margin for a loaded machine.
			if took := time.Since(stopAt); took > 4*time.Second {
				t.Errorf("Stop took %v", took)
			}
			out := l.String()
			t.Logf("log:\n%s", out)
			if !strings.Contains(out, "were not delivered to grpc (insecure), "+rcv.GRPCAddr) {
				t.Errorf("loss not reported:\n%s", out)
			}
			if strings.Contains(out, "t0psecret") {
				t.Errorf("the token leaked:\n%s", out)
			}
			if len(rcv.Requests()) != 0 {
				t.Errorf("the receiver stored %d exports", len(rcv.Requests()))
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(map[string]string{"OTEL_SERVICE_NAME": "a", "K6_OTEL_EXPORT_INTERVAL": "3s"}, "v9")
	if err != nil {
		t.Fatal(err)
	}
	if c.ServiceName != "a" || c.ServiceVersion != "v9" || c.ExportInterval != 3*time.Second || c.Protocol != "grpc" ||
		c.GRPCEndpoint != "localhost:4317" || c.Histogram != histogramExponential {
		t.Errorf("config %+v", c)
	}
	if c, _ := ParseConfig(map[string]string{"OTEL_SERVICE_NAME": "a", "K6_OTEL_SERVICE_NAME": "b"}, "v"); c.ServiceName != "b" {
		t.Errorf("K6_OTEL_SERVICE_NAME does not win: %q", c.ServiceName)
	}
	for _, bad := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"K6_OTEL_EXPORTER_PROTOCOL": "http/json"}, "K6_OTEL_EXPORTER_PROTOCOL"},
		{map[string]string{"K6_OTEL_EXPORTER_PROTOCOL": "http/protobuf", "K6_OTEL_HTTP_EXPORTER_ENDPOINT": "http://h:4318"}, "without a scheme"},
		{map[string]string{"K6_OTEL_EXPORT_INTERVAL": "never"}, "K6_OTEL_EXPORT_INTERVAL"},
		{map[string]string{"K6_OTEL_SERVICE_NAME": ""}, "K6_OTEL_SERVICE_NAME"},
		{map[string]string{"K6_OTEL_GRPC_EXPORTER_INSECURE": "yes please"}, "K6_OTEL_GRPC_EXPORTER_INSECURE"},
		{map[string]string{envHistogram: "summary"}, envHistogram},
	} {
		if _, err := ParseConfig(bad.env, "v"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseConfig(%v) = %v, want an error naming %s", bad.env, err, bad.want)
		}
	}
	// A malformed header says where, without the value.
	_, err = New(output.Params{Env: map[string]string{"K6_OTEL_HEADERS": "x-api-key=abc%zzsecret"}})
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "x-api-key") {
		t.Errorf("New = %v, want an error naming the header without its value", err)
	}
}
