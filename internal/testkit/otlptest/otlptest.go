// Package otlptest is an OTLP metrics receiver for tests, built from the
// official OpenTelemetry proto packages: it listens on loopback for OTLP
// over gRPC and over HTTP (protobuf at /v1/metrics), keeps every export
// request, and can be told to stall or to refuse.
package otlptest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Receiver is a running OTLP metrics receiver.
type Receiver struct {
	// GRPCAddr and HTTPAddr are host:port on 127.0.0.1.
	GRPCAddr, HTTPAddr string

	mu       sync.Mutex
	requests []*colmetricspb.ExportMetricsServiceRequest
	headers  []map[string]string
	mode     Mode
	release  chan struct{}

	grpc *grpc.Server
	http *http.Server
}

// Mode is how the receiver answers.
type Mode int

const (
	// Accept stores every export and answers success.
	Accept Mode = iota
	// Stall never answers: each export waits until the client gives up
	// (or Close).
	Stall
	// Refuse answers every export with an error the client does not
	// retry (gRPC InvalidArgument, HTTP 400).
	Refuse
)

// Start starts a receiver on two free loopback ports and closes it when
// the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{release: make(chan struct{})}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.GRPCAddr, r.HTTPAddr = gl.Addr().String(), hl.Addr().String()
	r.grpc = grpc.NewServer()
	colmetricspb.RegisterMetricsServiceServer(r.grpc, &grpcService{r: r})
	r.http = &http.Server{Handler: http.HandlerFunc(r.serveHTTP)}
	go func() { _ = r.grpc.Serve(gl) }()
	go func() { _ = r.http.Serve(hl) }()
	t.Cleanup(r.Close)
	return r
}

// Close stops both servers, releasing stalled exports.
func (r *Receiver) Close() {
	r.mu.Lock()
	select {
	case <-r.release:
	default:
		close(r.release)
	}
	r.mu.Unlock()
	r.grpc.Stop()
	_ = r.http.Close()
}

// SetMode changes how later exports are answered.
func (r *Receiver) SetMode(m Mode) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mode = m
}

// receive applies the mode to one export; ok reports whether to answer
// success.
func (r *Receiver) receive(ctx context.Context, req *colmetricspb.ExportMetricsServiceRequest, headers map[string]string) bool {
	r.mu.Lock()
	mode := r.mode
	if mode == Accept {
		r.requests = append(r.requests, req)
		r.headers = append(r.headers, headers)
	}
	r.mu.Unlock()
	if mode == Stall {
		select {
		case <-ctx.Done():
		case <-r.release:
		}
		return false
	}
	return mode == Accept
}

type grpcService struct {
	colmetricspb.UnimplementedMetricsServiceServer
	r *Receiver
}

func (s *grpcService) Export(ctx context.Context, req *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	headers := map[string]string{}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		for k, v := range md {
			headers[k] = strings.Join(v, ",")
		}
	}
	if !s.r.receive(ctx, req, headers) {
		return nil, status.Error(codes.InvalidArgument, "otlptest refuses this export")
	}
	return &colmetricspb.ExportMetricsServiceResponse{}, nil
}

func (r *Receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/metrics" {
		http.NotFound(w, req)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg colmetricspb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, "not an ExportMetricsServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	headers := map[string]string{}
	for k, v := range req.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	if !r.receive(req.Context(), &msg, headers) {
		http.Error(w, "otlptest refuses this export", http.StatusBadRequest)
		return
	}
	out, _ := proto.Marshal(&colmetricspb.ExportMetricsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Requests returns the exports received so far.
func (r *Receiver) Requests() []*colmetricspb.ExportMetricsServiceRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*colmetricspb.ExportMetricsServiceRequest(nil), r.requests...)
}

// Headers returns the headers (gRPC metadata) of each export received,
// with lower-case names.
func (r *Receiver) Headers() []map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]string(nil), r.headers...)
}

// Point is one data point of a received metric.
type Point struct {
	// Metric is the metric's name, Kind its data type (sum, gauge,
	// histogram, exponential_histogram) and Unit its unit.
	Metric, Kind, Unit string
	// Attrs are the point's attributes as strings.
	Attrs map[string]string
	// Resource and Scope are the resource's attributes and the
	// instrumentation scope's name.
	Resource map[string]string
	Scope    string
	// Value is a sum's or gauge's value; Count and Sum a histogram's.
	Value, Sum float64
	Count      uint64
	// Monotonic and Cumulative describe a sum (and Cumulative a
	// histogram's temporality).
	Monotonic, Cumulative bool
	// Exp is an exponential histogram's data point.
	Exp *metricspb.ExponentialHistogramDataPoint
}

// Points flattens every export received into data points, in order.
func (r *Receiver) Points() []Point {
	var out []Point
	for _, req := range r.Requests() {
		for _, rm := range req.ResourceMetrics {
			res := attrs(rm.GetResource().GetAttributes())
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					base := Point{Metric: m.Name, Unit: m.Unit, Resource: res, Scope: sm.GetScope().GetName()}
					out = append(out, points(base, m)...)
				}
			}
		}
	}
	return out
}

func points(base Point, m *metricspb.Metric) []Point {
	var out []Point
	add := func(p Point) { out = append(out, p) }
	switch d := m.Data.(type) {
	case *metricspb.Metric_Sum:
		for _, dp := range d.Sum.DataPoints {
			p := base
			p.Kind, p.Attrs, p.Value = "sum", attrs(dp.Attributes), number(dp)
			p.Monotonic = d.Sum.IsMonotonic
			p.Cumulative = d.Sum.AggregationTemporality == metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
			add(p)
		}
	case *metricspb.Metric_Gauge:
		for _, dp := range d.Gauge.DataPoints {
			p := base
			p.Kind, p.Attrs, p.Value = "gauge", attrs(dp.Attributes), number(dp)
			add(p)
		}
	case *metricspb.Metric_Histogram:
		for _, dp := range d.Histogram.DataPoints {
			p := base
			p.Kind, p.Attrs, p.Count, p.Sum = "histogram", attrs(dp.Attributes), dp.Count, dp.GetSum()
			p.Cumulative = d.Histogram.AggregationTemporality == metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
			add(p)
		}
	case *metricspb.Metric_ExponentialHistogram:
		for _, dp := range d.ExponentialHistogram.DataPoints {
			p := base
			p.Kind, p.Attrs, p.Count, p.Sum, p.Exp = "exponential_histogram", attrs(dp.Attributes), dp.Count, dp.GetSum(), dp
			p.Cumulative = d.ExponentialHistogram.AggregationTemporality == metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
			add(p)
		}
	default:
		p := base
		p.Kind = fmt.Sprintf("%T", m.Data)
		add(p)
	}
	return out
}

func number(dp *metricspb.NumberDataPoint) float64 {
	switch v := dp.Value.(type) {
	case *metricspb.NumberDataPoint_AsDouble:
		return v.AsDouble
	case *metricspb.NumberDataPoint_AsInt:
		return float64(v.AsInt)
	}
	return 0
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = anyString(kv.Value)
	}
	return out
}

func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	}
	return fmt.Sprint(v)
}

// SortedKeys returns the keys of m in order.
func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
