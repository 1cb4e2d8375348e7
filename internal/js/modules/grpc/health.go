package grpc

import (
	"context"
	"time"

	"github.com/grafana/sobek"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

// healthNames are the exported serving statuses of grpc.health.v1, with
// k6's names (its misspelt HealthCheckServiceUnkown included).
var healthNames = map[string]healthpb.HealthCheckResponse_ServingStatus{
	"HealthCheckUnknown":       healthpb.HealthCheckResponse_UNKNOWN,
	"HealthCheckServing":       healthpb.HealthCheckResponse_SERVING,
	"HealthCheckNotServing":    healthpb.HealthCheckResponse_NOT_SERVING,
	"HealthCheckServiceUnkown": healthpb.HealthCheckResponse_SERVICE_UNKNOWN,
}

// jsHealthCheck is client.healthCheck(service?): grpc.health.v1's Check
// for the service ("" for the server as a whole). It returns {status}, a
// serving status that compares equal to grpc.HealthCheckServing and its
// kin, and throws the call's error as k6 does; like any call it records
// grpc_req_duration, with the VU's tags and the status alone.
func (c *client) jsHealthCheck(call sobek.FunctionCall) sobek.Value {
	rt := c.m.rt
	st := c.m.state("client.healthCheck")
	if c.conn == nil {
		jsmod.Throw(rt, errNotConnected)
	}
	var service string
	if v := call.Argument(0); !jsmod.Absent(v) {
		service = v.String()
	}
	ctx, cancel := context.WithTimeout(c.m.vu.Context(), defaultTimeout)
	defer cancel()
	start := time.Now()
	res, err := healthpb.NewHealthClient(c.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	end := time.Now()
	c.countBytes(st)
	if st.Recorder != nil {
		if m := c.m.metric(st, &c.m.m.reqDuration, ReqDurationName, metrics.Trend, metrics.Time); m != nil {
			tags := st.Tags
			if tags == nil {
				tags = metrics.EmptyTags
			}
			tags = withStatus(st, tags, status.Code(err))
			st.Recorder.Record(metrics.Sample{Metric: m, Tags: tags, Time: end, Value: metrics.Milliseconds(end.Sub(start))})
			if err != nil && c.m.vu.Context().Err() != nil {
				// Cut off by the end of the iteration, as invoke's.
				jsmod.RecordInterrupted(st, tags, start, end)
			} else {
				jsmod.RecordLatency(st, tags, end, end.Sub(start))
			}
		}
	}
	if err != nil {
		jsmod.Throw(rt, jsmod.Errorf(jsmod.GoError, "%v", err))
	}
	o := rt.NewObject()
	_ = o.Set("status", res.GetStatus())
	return o
}
