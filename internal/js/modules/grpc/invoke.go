package grpc

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

// call is one unary call, parsed from JavaScript into plain Go so that it
// can run off the VU goroutine (asyncInvoke).
type call struct {
	conn    *grpc.ClientConn
	name    string // "/pkg.Service/Method"
	md      protoreflect.MethodDescriptor
	req     proto.Message
	meta    metadata.MD
	timeout time.Duration
	tags    *metrics.TagSet
	// discard is params.discardResponseMessage: the answer is read as
	// google.protobuf.Empty and the response's message is null.
	discard bool

	// The outcome.
	resp            *dynamicpb.Message
	header, trailer metadata.MD
	err             error
	start, end      time.Time
	// cut is set when the iteration was cut off (the VU's context
	// ended) while the call waited for its answer.
	cut bool
}

// jsInvoke is client.invoke(method, request, params).
func (c *client) jsInvoke(fc sobek.FunctionCall) sobek.Value {
	st := c.m.state("client.invoke")
	k := c.prepare(st, fc)
	k.do(c.m.vu.Context())
	c.emit(st, k)
	return c.response(k)
}

// jsAsyncInvoke is client.asyncInvoke(method, request, params): invoke
// that returns a promise of the response. The call's samples are recorded
// even when the iteration is interrupted before the promise settles
// (jsmod.AsyncMeasured).
func (c *client) jsAsyncInvoke(fc sobek.FunctionCall) sobek.Value {
	st := c.m.state("client.asyncInvoke")
	k := c.prepare(st, fc)
	ctx := c.m.vu.Context()
	return jsmod.AsyncMeasured(c.m.vu, func() (func(), func(*sobek.Runtime) (any, error)) {
		k.do(ctx)
		record := func() {
			// The iteration may have ended; its State is gone then and
			// the sample with it.
			if cur := c.m.vu.State(); cur == st {
				c.emit(st, k)
			}
		}
		return record, func(*sobek.Runtime) (any, error) { return c.response(k), nil }
	})
}

// prepare parses invoke's arguments.
func (c *client) prepare(st *modules.State, fc sobek.FunctionCall) *call {
	rt := c.m.rt
	if c.conn == nil {
		jsmod.Throw(rt, errNotConnected)
	}
	name, md := c.method(fc.Argument(0))
	if md.IsStreamingClient() || md.IsStreamingServer() {
		jsmod.Throwf(rt, "method %s is a streaming method: use new grpc.Stream(client, method) for it", name)
	}
	req := dynamicpb.NewMessage(md.Input())
	if err := c.unmarshalOpts().Unmarshal(c.requestJSON(fc.Argument(1)), req); err != nil {
		jsmod.Throwf(rt, "the request does not fit %s: %v", md.Input().FullName(), err)
	}
	p := c.params(st, fc.Argument(2), "the invoke params")
	k := &call{conn: c.conn, name: name, md: md, req: req, timeout: defaultTimeout, meta: p.meta, discard: p.discard}
	if p.timeout > 0 {
		k.timeout = p.timeout
	}
	k.tags = c.systemTags(st, p.tags, name, md, "")
	return k
}

// callParams are the params of invoke and of a stream.
type callParams struct {
	meta metadata.MD
	tags *metrics.TagSet
	// timeout is 0 when not given.
	timeout time.Duration
	// discard is discardResponseMessage: answers are not decoded.
	discard bool
}

// params reads the params of invoke and of a stream.
func (c *client) params(st *modules.State, v sobek.Value, what string) callParams {
	rt := c.m.rt
	p := callParams{meta: metadata.MD{}, tags: st.Tags}
	if p.tags == nil {
		p.tags = metrics.EmptyTags
	}
	if jsmod.Absent(v) {
		return p
	}
	o := jsmod.Object(rt, v, what)
	for _, key := range o.Keys() {
		x := o.Get(key)
		switch key {
		case "metadata":
			p.meta = c.metadata(x, "params.metadata")
		case "tags":
			to := jsmod.Object(rt, x, "params.tags")
			for _, tk := range to.Keys() {
				p.tags = p.tags.With(tk, to.Get(tk).String())
			}
		case "timeout":
			p.timeout = c.duration(x, "params.timeout")
		case "discardResponseMessage":
			p.discard = x.ToBoolean()
		default:
			jsmod.Throwf(rt, "%s: unknown param %q (known: metadata, tags, timeout, discardResponseMessage)", what, key)
		}
	}
	return p
}

// metadata reads a metadata object: keys lower-cased, a "-bin" key's
// ArrayBuffer as its bytes, any other value as its string.
func (c *client) metadata(v sobek.Value, what string) metadata.MD {
	rt := c.m.rt
	meta := metadata.MD{}
	mo := jsmod.Object(rt, v, what)
	for _, mk := range mo.Keys() {
		mv := mo.Get(mk)
		lk := strings.ToLower(mk)
		if b, ok := jsmod.Bytes(rt, mv); ok && strings.HasSuffix(lk, "-bin") {
			meta.Append(lk, string(b))
		} else {
			meta.Append(lk, mv.String())
		}
	}
	return meta
}

// systemTags adds the enabled gRPC system tags as k6 v2 sets them: name
// is the full method ("/pkg.Service/Method") unless the script named the
// call, method the method's short name, service the service's full name,
// url the address followed by the full method; rpc_type only for streams.
func (c *client) systemTags(st *modules.State, tags *metrics.TagSet, name string, md protoreflect.MethodDescriptor, rpcType string) *metrics.TagSet {
	on := func(tag string) bool { return st.SystemTags == nil || st.SystemTags[tag] }
	if _, set := tags.Get("name"); !set && on("name") {
		tags = tags.With("name", name)
	}
	if on("method") {
		tags = tags.With("method", string(md.Name()))
	}
	if on("service") {
		tags = tags.With("service", string(md.Parent().FullName()))
	}
	if on("url") {
		tags = tags.With("url", c.addr+name)
	}
	if rpcType != "" && on("rpc_type") {
		tags = tags.With("rpc_type", rpcType)
	}
	return tags
}

// do runs the call; it touches no JavaScript.
func (k *call) do(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, k.timeout)
	defer cancel()
	if len(k.meta) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, k.meta)
	}
	k.resp = dynamicpb.NewMessage(responseType(k.md, k.discard))
	k.start = time.Now()
	k.err = k.conn.Invoke(ctx, k.name, k.req, k.resp, grpc.Header(&k.header), grpc.Trailer(&k.trailer))
	k.end = time.Now()
	k.cut = k.err != nil && parent.Err() != nil
}

// emit records grpc_req_duration and corrected_latency for a finished
// call.
func (c *client) emit(st *modules.State, k *call) {
	c.countBytes(st)
	if st.Recorder == nil {
		return
	}
	m := c.m.metric(st, &c.m.m.reqDuration, ReqDurationName, metrics.Trend, metrics.Time)
	if m == nil {
		return
	}
	tags := withStatus(st, k.tags, status.Code(k.err))
	if k.cut {
		// Cut off by the interruption: k6 drops its sample, metronome
		// charges the wait.
		jsmod.RecordInterrupted(st, tags, k.start, k.end)
		return
	}
	// Answered: recorded even when the VU gets to it after an
	// interruption, as k6 pushes it when the answer comes.
	jsmod.Measured(st).Record(metrics.Sample{Metric: m, Tags: tags, Time: k.end,
		Value: metrics.Milliseconds(k.end.Sub(k.start))})
	jsmod.RecordLatency(st, tags, k.end, k.end.Sub(k.start))
}

// withStatus adds the status tag k6 puts on grpc_req_duration, unless the
// system tags leave it out.
func withStatus(st *modules.State, tags *metrics.TagSet, code codes.Code) *metrics.TagSet {
	if st.SystemTags != nil && !st.SystemTags["status"] {
		return tags
	}
	return tags.With("status", strconv.Itoa(int(code)))
}

// response builds invoke's result: {status, message, headers, trailers,
// error}. A failed call has an error object {code, message, details}.
func (c *client) response(k *call) sobek.Value {
	rt := c.m.rt
	o := rt.NewObject()
	s, _ := status.FromError(k.err)
	_ = o.Set("status", s.Code())
	_ = o.Set("headers", mdObject(rt, k.header))
	_ = o.Set("trailers", mdObject(rt, k.trailer))
	if k.discard {
		_ = o.Set("message", sobek.Null())
	} else {
		// A failed call shows the empty message, as k6's does.
		b, err := c.marshalOpts().Marshal(k.resp)
		if err != nil {
			jsmod.Throwf(rt, "the response of %s: %v", k.name, err)
		}
		_ = o.Set("message", c.m.parseJSON(b))
	}
	if k.err == nil {
		_ = o.Set("error", sobek.Null())
		return o
	}
	msg := s.Message()
	if s.Code() == codes.Unknown && msg == "" {
		// Not a gRPC status: show the Go error itself.
		msg = k.err.Error()
	}
	details := []any{}
	for _, d := range s.Proto().GetDetails() {
		details = append(details, map[string]any{"@type": d.GetTypeUrl()})
	}
	e := rt.NewObject()
	_ = e.Set("code", int(s.Code()))
	_ = e.Set("message", msg)
	_ = e.Set("details", details)
	_ = o.Set("error", e)
	return o
}

// responseType is what answers to md are decoded as: its output, or
// google.protobuf.Empty, whose decoding skips every field, when the
// script discards the messages.
func responseType(md protoreflect.MethodDescriptor, discard bool) protoreflect.MessageDescriptor {
	if discard {
		return (&emptypb.Empty{}).ProtoReflect().Descriptor()
	}
	return md.Output()
}

// mdObject converts metadata to {key: [values]}.
func mdObject(rt *sobek.Runtime, md metadata.MD) *sobek.Object {
	o := rt.NewObject()
	for key, vals := range md {
		arr := make([]any, len(vals))
		for i, v := range vals {
			arr[i] = v
		}
		_ = o.Set(key, arr)
	}
	return o
}
