// Package websockets implements "k6/websockets" (also importable as
// "k6/experimental/websockets"): the browser-like WebSocket class. A
// socket holds a place in the VU's event loop from its construction until
// it is closed, so an iteration ends when its sockets are closed, as in
// k6; frames arrive on a reader goroutine and are dispatched on the VU's.
package websockets

import (
	"errors"
	"fmt"
	neturl "net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/internal/js/modules/internal/wsclient"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

func init() {
	modules.Register("k6/websockets", modules.ModuleFunc(New))
	modules.Register("k6/experimental/websockets", modules.ModuleFunc(newExperimental))
}

// deprecated is k6 v2.2.0's warning, once per test, for the module's old
// name, which still works there and here.
const deprecated = "k6/experimental/websockets is deprecated and will be removed in a future release. Please use k6/websockets instead."

// newExperimental is New under the old name k6/experimental/websockets,
// warning once per test as k6 does.
func newExperimental(vu modules.VU) (modules.Exports, error) {
	if env := vu.InitEnv(); env != nil && env.Shared != nil && env.Logf != nil {
		_, _ = env.Shared.Get("\x00k6/experimental/websockets deprecated", func() (any, error) {
			env.Logf("%s", deprecated)
			return true, nil
		})
	}
	return New(vu)
}

// Ready states, as in the browser.
const (
	connecting = iota
	open
	closing
	closed
)

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	m, err := wsclient.ForVU(vu)
	if err != nil {
		return modules.Exports{}, err
	}
	mod := &module{vu: vu, m: m}
	rt := vu.Runtime()
	ctor := rt.ToValue(mod.construct).ToObject(rt)
	for name, v := range map[string]int{"CONNECTING": connecting, "OPEN": open, "CLOSING": closing, "CLOSED": closed} {
		_ = ctor.DefineDataProperty(name, rt.ToValue(v), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	}
	blob := rt.ToValue(mod.newBlob).ToObject(rt)
	mod.blobProto = blob.Get("prototype").ToObject(rt)
	return modules.Exports{Named: map[string]any{"WebSocket": ctor, "Blob": blob}}, nil
}

type module struct {
	vu        modules.VU
	m         *wsclient.Metrics
	blobProto *sobek.Object
}

// event is what the reader goroutine hands to the VU goroutine.
type event struct {
	kind string // open, failed, message, binary, ping, pong, closed
	data []byte
	at   time.Time
	code int
	text string
	err  error
}

// socket is one WebSocket object.
type socket struct {
	mod       *module
	rt        *sobek.Runtime
	obj       *sobek.Object
	sess      *wsclient.Session
	state     int
	listeners map[string][]sobek.Callable
	stop      chan struct{}

	mu      sync.Mutex
	queue   []event
	reserve func(func() error) // the loop place the next delivery uses
}

func (mod *module) construct(call sobek.ConstructorCall) *sobek.Object {
	rt := mod.vu.Runtime()
	st := mod.vu.State()
	if st == nil {
		panic(rt.NewTypeError("a WebSocket can only be created in VU code, not in the init context"))
	}
	m, err := wsclient.Resolve(mod.m, st)
	if err != nil {
		panic(rt.NewGoError(err))
	}
	mod.m = m
	url, err := parseURL(call.Argument(0))
	if err != nil {
		panic(rt.NewGoError(err))
	}
	p := wsclient.Params{URL: url, NameTag: true}
	if v := call.Argument(1); !jsmod.Absent(v) {
		if arr, ok := v.Export().([]any); ok {
			for _, x := range arr {
				if s, ok := x.(string); ok {
					p.Subprotocols = append(p.Subprotocols, s)
				}
			}
		} else if s := v.String(); s != "" {
			p.Subprotocols = []string{s}
		}
	}
	if err := p.SetFrom(rt, call.Argument(2)); err != nil {
		panic(rt.NewGoError(err))
	}
	s := &socket{mod: mod, rt: rt, obj: call.This, listeners: map[string][]sobek.Callable{}, stop: make(chan struct{})}
	s.define(url)
	s.sess = wsclient.Prepare(st, m, p)
	s.arm()
	ctx := mod.vu.Context()
	go func() {
		if _, err := s.sess.Dial(ctx); err != nil {
			s.post(event{kind: "failed", err: err, at: time.Now()})
			return
		}
		s.post(event{kind: "open", at: time.Now()})
		go func() {
			select {
			case <-ctx.Done():
				_ = s.sess.Conn.Close()
			case <-s.stop:
			}
		}()
		s.read()
	}()
	return nil
}

// parseURL checks a socket's URL as k6 v2.2.0 does before it counts a
// session: a URL that is absent, does not parse, is not ws:// or wss://
// (one without a scheme among them) or has a fragment throws its words.
func parseURL(v sobek.Value) (string, error) {
	if jsmod.Absent(v) {
		return "", errors.New("WebSocket requires a url")
	}
	s := v.String()
	u, err := neturl.Parse(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("WebSocket requires valid url, but got %q which resulted in %w", s, err)
	case u.Scheme != "ws" && u.Scheme != "wss":
		return "", fmt.Errorf("WebSocket requires url with scheme ws or wss, but got %q", u.Scheme)
	case u.Fragment != "":
		return "", fmt.Errorf("WebSocket requires no url fragment, but got %q", u.Fragment)
	}
	return s, nil
}

// define puts the socket's API on its object.
func (s *socket) define(url string) {
	rt, o := s.rt, s.obj
	ro := func(name string, get func() any) {
		_ = o.DefineAccessorProperty(name, rt.ToValue(func() any { return get() }), nil, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	}
	ro("url", func() any { return url })
	ro("readyState", func() any { return s.state })
	ro("bufferedAmount", func() any { return 0 })
	ro("protocol", func() any {
		if s.sess != nil && s.sess.Conn != nil && s.state >= open {
			return s.sess.Conn.Subprotocol()
		}
		return ""
	})
	ro("extensions", func() any { return "" })
	_ = o.Set("binaryType", "blob")
	for _, name := range []string{"onopen", "onmessage", "onerror", "onclose", "onping", "onpong"} {
		_ = o.Set(name, sobek.Null())
	}
	_ = o.Set("addEventListener", func(kind string, fn sobek.Value) {
		f, ok := sobek.AssertFunction(fn)
		if !ok {
			panic(rt.NewTypeError("addEventListener needs a function for %q", kind))
		}
		s.listeners[kind] = append(s.listeners[kind], f)
	})
	_ = o.Set("send", s.send)
	_ = o.Set("ping", s.ping)
	_ = o.Set("close", s.close)
}

func (s *socket) send(v sobek.Value) {
	if s.state != open {
		panic(s.rt.NewTypeError("WebSocket.send: the socket is not open (readyState %d)", s.state))
	}
	kind, b := websocket.TextMessage, []byte(nil)
	if bb, ok := s.mod.blobBytes(v); ok {
		kind, b = websocket.BinaryMessage, bb
	} else if bb, ok := jsmod.Bytes(s.rt, v); ok {
		kind, b = websocket.BinaryMessage, bb
	} else {
		b = []byte(v.String())
	}
	if err := s.sess.Conn.WriteMessage(kind, b); err != nil {
		s.fail(err)
		return
	}
	s.sess.Sent(time.Now())
}

func (s *socket) ping() {
	if s.state != open {
		return
	}
	if err := s.sess.Ping(); err != nil {
		s.fail(err)
		return
	}
	s.sess.Sent(time.Now())
}

func (s *socket) close(call sobek.FunctionCall) sobek.Value {
	code := websocket.CloseNormalClosure
	if c := call.Argument(0); !sobek.IsUndefined(c) && !sobek.IsNull(c) {
		code = int(c.ToInteger())
	}
	reason := ""
	if r := call.Argument(1); !sobek.IsUndefined(r) && !sobek.IsNull(r) {
		reason = r.String()
	}
	if s.state != open {
		return sobek.Undefined()
	}
	s.state = closing
	if err := s.sess.Close(code, reason); err == nil {
		s.sess.Sent(time.Now())
	}
	return sobek.Undefined()
}

// fail reports a write error; the reader sees the broken connection and
// ends the session.
func (s *socket) fail(err error) {
	s.dispatch("error", map[string]any{"error": err.Error()})
	_ = s.sess.Conn.Close()
}

// arm reserves the loop place the next batch of events is delivered
// through. It runs on the VU goroutine.
//
// The place is one for work that measures (modules.MeasuringVU): when the
// iteration is interrupted before the events ran, the VU still adds the
// bytes the session moved to data_sent and data_received, as k6 counts
// every byte of a VU's connections in an interrupted iteration.
func (s *socket) arm() {
	var r func(func() error)
	if m, ok := s.mod.vu.(modules.MeasuringVU); ok {
		measured := m.RegisterMeasured()
		r = func(f func() error) { measured(s.sess.CountBytes, f) }
	} else {
		r = s.mod.vu.RegisterCallback()
	}
	s.mu.Lock()
	if len(s.queue) > 0 {
		s.mu.Unlock()
		r(s.drain)
		return
	}
	s.reserve = r
	s.mu.Unlock()
}

// post queues ev from any goroutine and wakes the VU when it waits.
func (s *socket) post(ev event) {
	s.mu.Lock()
	s.queue = append(s.queue, ev)
	r := s.reserve
	s.reserve = nil
	s.mu.Unlock()
	if r != nil {
		r(s.drain)
	}
}

// drain dispatches the queued events on the VU goroutine and reserves the
// next place unless the socket is closed.
func (s *socket) drain() error {
	s.mu.Lock()
	q := s.queue
	s.queue = nil
	s.mu.Unlock()
	var err error
	for _, ev := range q {
		if err = s.handle(ev); err != nil {
			break
		}
	}
	if s.state != closed && err == nil {
		s.arm()
	}
	if err != nil && s.state != closed {
		close(s.stop)
		_ = s.sess.Conn.Close()
		s.state = closed
	}
	return err
}

// handle dispatches one event; a handler's exception is returned.
func (s *socket) handle(ev event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	ts := float64(ev.at.UnixNano()) / 1e6
	switch ev.kind {
	case "failed":
		// As k6: the session that never opened is counted, then the
		// script hears an error and a close without a code.
		s.state = closed
		s.sess.Opened()
		s.dispatch("error", map[string]any{"error": ev.err.Error(), "timestamp": ts})
		s.dispatch("close", map[string]any{"reason": "", "timestamp": ts})
	case "open":
		s.state = open
		s.sess.Opened()
		s.dispatch("open", map[string]any{"timestamp": ts})
	case "message", "binary":
		s.sess.Received(ev.at)
		var data any = string(ev.data)
		if ev.kind == "binary" {
			if s.obj.Get("binaryType").String() == "arraybuffer" {
				data = s.rt.NewArrayBuffer(ev.data)
			} else {
				data = s.mod.blob(ev.data, "")
			}
		}
		s.dispatch("message", map[string]any{"data": data, "origin": s.sess.Resp.Request.URL.String(), "timestamp": ts})
	case "ping":
		s.dispatch("ping", map[string]any{"timestamp": ts})
	case "pong":
		s.sess.Pong(ev.data, ev.at)
		s.dispatch("pong", map[string]any{"timestamp": ts})
	case "closed":
		wasClosing := s.state == closing
		s.state = closed
		close(s.stop)
		_ = s.sess.Conn.Close()
		s.sess.End(ev.at)
		if ev.err != nil && !wasClosing {
			s.dispatch("error", map[string]any{"error": ev.err.Error(), "timestamp": ts})
		}
		s.dispatch("close", map[string]any{"code": ev.code, "reason": ev.text, "wasClean": ev.err == nil, "timestamp": ts})
	}
	return nil
}

// dispatch calls the on<kind> property and the listeners of kind with an
// event object holding fields.
func (s *socket) dispatch(kind string, fields map[string]any) {
	e := s.rt.NewObject()
	_ = e.Set("type", kind)
	_ = e.Set("target", s.obj)
	// k6's order of the fields, so that Object.keys and JSON read alike.
	for _, k := range [...]string{"timestamp", "data", "origin", "code", "reason", "wasClean", "error"} {
		if v, ok := fields[k]; ok {
			_ = e.Set(k, v)
		}
	}
	call := func(f sobek.Callable) {
		if _, err := f(s.obj, e); err != nil {
			panic(err)
		}
	}
	if f, ok := sobek.AssertFunction(s.obj.Get("on" + kind)); ok {
		call(f)
	}
	for _, f := range s.listeners[kind] {
		call(f)
	}
}

// read pumps frames to the VU until the connection ends.
func (s *socket) read() {
	s.sess.Read(func(f wsclient.Frame) {
		s.post(event{kind: f.Kind, data: f.Data, at: f.At, code: f.Code, text: f.Text, err: f.Err})
	})
}
