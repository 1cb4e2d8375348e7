// Package grpc is the "k6/net/grpc" JavaScript module: gRPC calls from VU
// code, measured into k6's grpc_req_duration.
//
// Services are described at run time, never by generated code: .proto
// files are compiled in the init context with protocompile, a protoset is
// read as a FileDescriptorSet, or the server is asked through gRPC server
// reflection. Messages are dynamicpb messages converted to and from
// JavaScript through protobuf's JSON mapping (protojson), as k6 does.
package grpc

import (
	"github.com/grafana/sobek"
	"google.golang.org/grpc/codes"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

// The status constants are codes.Code values, as in k6: a response's
// status compares equal to them and String(grpc.StatusNotFound) is
// "NotFound".

// Names of the module's metrics, as k6 names them.
const (
	ReqDurationName         = "grpc_req_duration"
	StreamsName             = "grpc_streams"
	StreamsMsgsSentName     = "grpc_streams_msgs_sent"
	StreamsMsgsReceivedName = "grpc_streams_msgs_received"
)

// errNotConnected is k6's error for a call that needs client.connect first.
var errNotConnected = jsmod.Errorf(jsmod.GoError, "no gRPC connection, you must call connect first")

func init() {
	modules.Register("k6/net/grpc", modules.ModuleFunc(instantiate))
}

// module is k6/net/grpc in one VU.
type module struct {
	vu modules.VU
	rt *sobek.Runtime
	m  metricSet

	jsonParse sobek.Callable
	// clients finds the Go client of a grpc.Client object (grpc.Stream's
	// first argument).
	clients map[*sobek.Object]*client
}

// metricSet are the module's metric definitions.
type metricSet struct {
	reqDuration, streams, msgsSent, msgsReceived *metrics.Metric
}

// statusNames are the exported status constants and their codes.
var statusNames = map[string]codes.Code{
	"StatusOK":                 codes.OK,
	"StatusCanceled":           codes.Canceled,
	"StatusUnknown":            codes.Unknown,
	"StatusInvalidArgument":    codes.InvalidArgument,
	"StatusDeadlineExceeded":   codes.DeadlineExceeded,
	"StatusNotFound":           codes.NotFound,
	"StatusAlreadyExists":      codes.AlreadyExists,
	"StatusPermissionDenied":   codes.PermissionDenied,
	"StatusResourceExhausted":  codes.ResourceExhausted,
	"StatusFailedPrecondition": codes.FailedPrecondition,
	"StatusAborted":            codes.Aborted,
	"StatusOutOfRange":         codes.OutOfRange,
	"StatusUnimplemented":      codes.Unimplemented,
	"StatusInternal":           codes.Internal,
	"StatusUnavailable":        codes.Unavailable,
	"StatusDataLoss":           codes.DataLoss,
	"StatusUnauthenticated":    codes.Unauthenticated,
}

func instantiate(vu modules.VU) (modules.Exports, error) {
	m := &module{vu: vu, rt: vu.Runtime(), clients: map[*sobek.Object]*client{}}
	if env := vu.InitEnv(); env != nil && env.Registry != nil {
		var err error
		r := env.Registry
		if m.m.reqDuration, err = r.New(ReqDurationName, metrics.Trend, metrics.Time); err != nil {
			return modules.Exports{}, err
		}
		if m.m.streams, err = r.New(StreamsName, metrics.Counter, metrics.Default); err != nil {
			return modules.Exports{}, err
		}
		if m.m.msgsSent, err = r.New(StreamsMsgsSentName, metrics.Counter, metrics.Default); err != nil {
			return modules.Exports{}, err
		}
		if m.m.msgsReceived, err = r.New(StreamsMsgsReceivedName, metrics.Counter, metrics.Default); err != nil {
			return modules.Exports{}, err
		}
	}
	named := map[string]any{
		"Client": m.newClient,
		"Stream": m.newStream,
	}
	for name, c := range statusNames {
		named[name] = c
	}
	for name, s := range healthNames {
		named[name] = s
	}
	return modules.Exports{Named: named}, nil
}

// state returns the VU's State, throwing in the init context.
func (m *module) state(what string) *modules.State {
	st := m.vu.State()
	if st == nil {
		jsmod.Throwf(m.rt, "%s is not supported in the init context: call it in the default function, setup() or teardown()", what)
	}
	return st
}

// metric returns a metric of the run's registry when the module was not
// instantiated with one (it always is in a run; this keeps odd embeddings
// from crashing).
func (m *module) metric(st *modules.State, slot **metrics.Metric, name string, t metrics.Type, c metrics.ValueType) *metrics.Metric {
	if *slot == nil && st.Registry != nil {
		*slot, _ = st.Registry.New(name, t, c)
	}
	return *slot
}

// parseJSON is JSON.parse, which keeps the fields in the order protojson
// wrote them (the proto's order).
func (m *module) parseJSON(b []byte) sobek.Value {
	if m.jsonParse == nil {
		fn, ok := sobek.AssertFunction(m.rt.Get("JSON").ToObject(m.rt).Get("parse"))
		if !ok {
			jsmod.Throwf(m.rt, "JSON.parse is not a function")
		}
		m.jsonParse = fn
	}
	v, err := m.jsonParse(sobek.Undefined(), m.rt.ToValue(string(b)))
	if err != nil {
		jsmod.Throw(m.rt, err)
	}
	return v
}
