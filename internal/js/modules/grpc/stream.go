package grpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/grafana/sobek"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

// stream is one grpc.Stream: a client, server or bidirectional stream
// whose received messages and end reach the script as events on the VU's
// event loop, one at a time, so that the iteration lasts until the stream
// ended.
type stream struct {
	c      *client
	st     *modules.State
	md     protoreflect.MethodDescriptor
	name   string
	cs     grpc.ClientStream
	ctx    context.Context
	cancel context.CancelFunc
	tags   *metrics.TagSet
	start  time.Time
	// discard is params.discardResponseMessage: each message reaches the
	// data handlers as an empty object, undecoded.
	discard  bool
	handlers map[string][]sobek.Callable
	// next is the VU event-loop reservation the reader delivers its next
	// event with; each delivery makes the following one.
	next chan func(func() error)
}

// newStream is `new grpc.Stream(client, method, params)`.
func (m *module) newStream(call sobek.ConstructorCall) *sobek.Object {
	rt := m.rt
	st := m.state("new grpc.Stream")
	co, _ := call.Argument(0).(*sobek.Object)
	c := m.clients[co]
	if c == nil {
		jsmod.ThrowTypeError(rt, "grpc.Stream's first argument must be a grpc.Client, not %s", jsmod.Describe(call.Argument(0)))
	}
	if c.conn == nil {
		jsmod.Throw(rt, errNotConnected)
	}
	name, md := c.method(call.Argument(1))
	p := c.params(st, call.Argument(2), "the stream params")
	s := &stream{c: c, st: st, md: md, name: name, discard: p.discard, handlers: map[string][]sobek.Callable{}, next: make(chan func(func() error), 1)}
	s.tags = c.systemTags(st, p.tags, name, md, "")
	ctx, cancel := context.WithCancel(m.vu.Context())
	if p.timeout > 0 {
		ctx, cancel = context.WithTimeout(m.vu.Context(), p.timeout)
	}
	if len(p.meta) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, p.meta)
	}
	s.ctx, s.cancel = ctx, cancel
	desc := &grpc.StreamDesc{StreamName: string(md.Name()), ClientStreams: md.IsStreamingClient(), ServerStreams: md.IsStreamingServer()}
	s.start = time.Now()
	cs, err := c.conn.NewStream(ctx, desc, name)
	if err != nil {
		cancel()
		jsmod.Throwf(rt, "opening the stream %s: %v", name, err)
	}
	s.cs = cs
	s.record(m.metric(st, &m.m.streams, StreamsName, metrics.Counter, metrics.Default), s.tags, s.start, 1)
	s.next <- m.vu.RegisterCallback()
	go s.read()

	o := call.This
	_ = o.Set("on", s.jsOn)
	_ = o.Set("write", s.jsWrite)
	_ = o.Set("end", s.jsEnd)
	return nil
}

// record adds a sample of m with tags, when the iteration still runs.
func (s *stream) record(m *metrics.Metric, tags *metrics.TagSet, at time.Time, v float64) {
	if m != nil && s.st.Recorder != nil && s.c.m.vu.State() == s.st {
		s.st.Recorder.Record(metrics.Sample{Metric: m, Tags: tags, Time: at, Value: v})
	}
}

// jsOn is stream.on(event, handler) for 'data', 'error' and 'end'.
func (s *stream) jsOn(call sobek.FunctionCall) sobek.Value {
	rt := s.c.m.rt
	ev := jsmod.String(rt, call.Argument(0), "stream.on's event")
	switch ev {
	case "data", "error", "end":
	default:
		jsmod.Throwf(rt, "stream.on: unknown event %q (known: data, error, end)", ev)
	}
	s.handlers[ev] = append(s.handlers[ev], jsmod.Function(rt, call.Argument(1), "stream.on's handler"))
	return sobek.Undefined()
}

// jsWrite is stream.write(message).
func (s *stream) jsWrite(call sobek.FunctionCall) sobek.Value {
	rt := s.c.m.rt
	msg := dynamicpb.NewMessage(s.md.Input())
	if err := s.c.unmarshalOpts().Unmarshal(s.c.requestJSON(call.Argument(0)), msg); err != nil {
		jsmod.Throwf(rt, "the message does not fit %s: %v", s.md.Input().FullName(), err)
	}
	if err := s.cs.SendMsg(msg); err != nil {
		// The reader reports the stream's failure as an 'error' event.
		return sobek.Undefined()
	}
	s.record(s.c.m.metric(s.st, &s.c.m.m.msgsSent, StreamsMsgsSentName, metrics.Counter, metrics.Default), s.tags, time.Now(), 1)
	return sobek.Undefined()
}

// jsEnd is stream.end(): no more messages from the client.
func (s *stream) jsEnd(sobek.FunctionCall) sobek.Value {
	_ = s.cs.CloseSend()
	return sobek.Undefined()
}

// read receives until the stream ends and delivers each message, then
// the end (or an error followed by the end), on the VU's event loop.
func (s *stream) read() {
	defer s.cancel()
	for {
		msg := dynamicpb.NewMessage(responseType(s.md, s.discard))
		err := s.cs.RecvMsg(msg)
		at := time.Now()
		if err == nil {
			s.deliver(false, func() error {
				// k6 tags received messages without a status: the
				// stream's status is known only at its end.
				s.record(s.c.m.metric(s.st, &s.c.m.m.msgsReceived, StreamsMsgsReceivedName, metrics.Counter, metrics.Default),
					s.tags, at, 1)
				if s.discard {
					return s.emit("data", s.c.m.rt.NewObject(), at)
				}
				b, err := s.c.marshalOpts().Marshal(msg)
				if err != nil {
					return err
				}
				return s.emit("data", s.c.m.parseJSON(b), at)
			})
			continue
		}
		// Decided here, not on the event loop: by then the deferred cancel
		// has run, and a server that saw the propagated deadline first may
		// have reset the stream (CANCEL) a moment before ours expired.
		timedOut := s.timedOut(err, at)
		s.deliver(true, func() error {
			s.c.countBytes(s.st)
			if timedOut {
				// The stream's own timeout, reported as k6 reports it; k6
				// records no duration, its context being done by then.
				return s.fail(status.FromContextError(context.DeadlineExceeded).Err())
			}
			// Every other end has a duration tagged with its status, as
			// k6's stats handler records it: a clean end (OK), the
			// server's error status, and a stream that client.close()
			// cut off (CANCELLED); its corrected_latency goes with it.
			code := codes.OK
			if !errors.Is(err, io.EOF) {
				code = status.Code(err)
			}
			tags := withStatus(s.st, s.tags, code)
			s.record(s.c.m.metric(s.st, &s.c.m.m.reqDuration, ReqDurationName, metrics.Trend, metrics.Time),
				tags, at, metrics.Milliseconds(at.Sub(s.start)))
			if s.c.m.vu.State() == s.st {
				jsmod.RecordLatency(s.st, tags, at, at.Sub(s.start))
			}
			if code == codes.OK {
				return s.emit("end", s.c.m.rt.NewObject(), time.Now())
			}
			return s.fail(err)
		})
		return
	}
}

// fail runs the error handlers with err, then the end handlers. A
// cancelled stream (client.close() on its client) is reported with k6's
// words and code.
func (s *stream) fail(err error) error {
	st, _ := status.FromError(err)
	code, msg := st.Code(), st.Message()
	if code == codes.Canceled {
		code, msg = codes.Unknown, "canceled by client (k6)"
	}
	e := s.c.m.rt.ToValue(streamError{Code: code, Details: []any{}, Message: msg})
	if err := s.emit("error", e, time.Now()); err != nil {
		return err
	}
	return s.emit("end", s.c.m.rt.NewObject(), time.Now())
}

// streamError is what a stream's error handlers get: a Go error, as in
// k6, so that console.log and String() write "code: 5, message: no fail".
type streamError struct {
	Code    codes.Code `js:"code"`
	Details []any      `js:"details"`
	Message string     `js:"message"`
}

func (e streamError) Error() string { return fmt.Sprintf("code: %d, message: %s", e.Code, e.Message) }

// deliver runs f on the VU's event loop; unless the event is the last it
// reserves the place of the next one first.
func (s *stream) deliver(last bool, f func() error) {
	queue := <-s.next
	queue(func() error {
		if !last {
			s.next <- s.c.m.vu.RegisterCallback()
		}
		return f()
	})
}

// emit calls the handlers of ev with v and, as k6 does, a metadata
// object whose ts is the event's time in Unix seconds; an end's v is an
// empty object, as k6's.
func (s *stream) emit(ev string, v sobek.Value, at time.Time) error {
	meta := s.c.m.rt.NewObject()
	_ = meta.Set("ts", at.Unix())
	for _, h := range s.handlers[ev] {
		if _, err := h(sobek.Undefined(), v, meta); err != nil {
			return err
		}
	}
	return nil
}

// timedOut reports whether err, received at at, ends the stream because
// its own timeout passed: the context says so, or the error came within
// 100 ms of the deadline as a reset (gRPC reports the server's CANCEL as
// DeadlineExceeded or Canceled, with the reset as its message) before our
// context's timer fired.
func (s *stream) timedOut(err error, at time.Time) bool {
	if errors.Is(s.ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	dl, ok := s.ctx.Deadline()
	c := status.Code(err)
	return ok && (c == codes.DeadlineExceeded || c == codes.Canceled) && dl.Sub(at) < 100*time.Millisecond
}
