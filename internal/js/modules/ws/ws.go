// Package ws implements the "k6/ws" module: ws.connect opens a WebSocket
// session and runs it to its end on the VU's goroutine, so the iteration
// is blocked until the socket closes, as in k6. Handlers, the socket's own
// timers and incoming frames are dispatched from one loop, in order.
package ws

import (
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/internal/js/modules/internal/wsclient"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

func init() {
	modules.Register("k6/ws", modules.ModuleFunc(New))
}

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	m, err := wsclient.ForVU(vu)
	if err != nil {
		return modules.Exports{}, err
	}
	mod := &module{vu: vu, m: m}
	return modules.Exports{Named: map[string]any{"connect": mod.connect}}, nil
}

type module struct {
	vu modules.VU
	m  *wsclient.Metrics
}

func (mod *module) connect(call sobek.FunctionCall) sobek.Value {
	rt := mod.vu.Runtime()
	st := mod.vu.State()
	if st == nil {
		panic(rt.NewTypeError("ws.connect can only be called from VU code, not in the init context"))
	}
	m, err := wsclient.Resolve(mod.m, st)
	if err != nil {
		panic(rt.NewGoError(err))
	}
	mod.m = m
	url := call.Argument(0).String()
	paramsV, fnV := call.Argument(1), call.Argument(2)
	if _, isFn := sobek.AssertFunction(paramsV); isFn {
		paramsV, fnV = sobek.Undefined(), paramsV
	}
	setup, ok := sobek.AssertFunction(fnV)
	if !ok {
		panic(rt.NewTypeError("ws.connect needs a function as its last argument, the one that sets up the socket"))
	}
	p := wsclient.Params{URL: url}
	if err := p.SetFrom(rt, paramsV); err != nil {
		panic(rt.NewGoError(err))
	}
	ctx := mod.vu.Context()
	sess := wsclient.Prepare(st, m, p)
	resp, err := sess.Dial(ctx)
	sess.Opened()
	if err != nil {
		// As k6: the session is counted and ended, and the script gets the
		// error thrown only with the throw option; otherwise the server's
		// answer (a bad handshake) or a response of status 0 whose error
		// says why.
		sess.End(time.Now())
		if o := st.Options; o != nil && o.Throw != nil && *o.Throw {
			panic(rt.NewGoError(err))
		}
		return failed(rt, resp, err)
	}
	s := &socket{rt: rt, sess: sess, events: make(chan event, 64), handlers: map[string][]sobek.Callable{}, quit: make(chan struct{})}
	res := response(rt, url, resp)
	if _, err := setup(sobek.Undefined(), s.object()); err != nil {
		s.finish()
		panic(err)
	}
	if err := s.run(ctx.Done()); err != nil {
		panic(err)
	}
	return res
}

func response(rt *sobek.Runtime, url string, resp *http.Response) sobek.Value {
	o := answer(rt, resp, "")
	_ = o.Set("url", url)
	return o
}

// failed is what ws.connect returns for a connection that did not open
// (without the throw option): as k6, the server's answer with its body
// if there was one, else status 0 and the error; url is empty in both.
func failed(rt *sobek.Runtime, resp *http.Response, err error) sobek.Value {
	if resp == nil {
		return answer(rt, nil, err.Error())
	}
	o := answer(rt, resp, "")
	if resp.Body != nil {
		// gorilla/websocket keeps at most the first 1,024 bytes of a
		// refused handshake's body.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		_ = o.Set("body", string(b))
	}
	return o
}

// answer is the response object of k6/ws, with resp's status and headers
// (multiple values joined as k6 joins them) and the error text.
func answer(rt *sobek.Runtime, resp *http.Response, errText string) *sobek.Object {
	o := rt.NewObject()
	_ = o.Set("url", "")
	h := rt.NewObject()
	status := 0
	if resp != nil {
		status = resp.StatusCode
		for k, v := range resp.Header {
			_ = h.Set(k, strings.Join(v, ", "))
		}
	}
	_ = o.Set("status", status)
	_ = o.Set("headers", h)
	_ = o.Set("body", "")
	_ = o.Set("error", errText)
	return o
}

// event is something the loop dispatches on the VU goroutine.
type event struct {
	kind string // message, binary, ping, pong, closed, timer
	data []byte
	at   time.Time
	code int
	err  error
	t    *sockTimer
}

type sockTimer struct {
	t      *time.Timer
	fn     sobek.Callable
	repeat bool
	every  time.Duration
}

// socket is the JavaScript socket of one session.
type socket struct {
	rt       *sobek.Runtime
	sess     *wsclient.Session
	events   chan event
	handlers map[string][]sobek.Callable
	timers   []*sockTimer
	closing  bool
	done     bool
	readDone chan struct{}
	quit     chan struct{}
}

// post hands ev to the loop unless the session is over.
func (s *socket) post(ev event) {
	select {
	case s.events <- ev:
	case <-s.quit:
	}
}

func (s *socket) object() *sobek.Object {
	o := s.rt.NewObject()
	_ = o.Set("on", func(ev string, fn sobek.Value) {
		f, ok := sobek.AssertFunction(fn)
		if !ok {
			panic(s.rt.NewTypeError("socket.on needs a function for %q", ev))
		}
		s.handlers[ev] = append(s.handlers[ev], f)
	})
	_ = o.Set("send", func(v sobek.Value) {
		s.write(websocket.TextMessage, []byte(v.String()))
	})
	_ = o.Set("sendBinary", func(v sobek.Value) {
		b, ok := jsmod.Bytes(s.rt, v)
		if !ok {
			panic(s.rt.NewTypeError("socket.sendBinary needs an ArrayBuffer"))
		}
		s.write(websocket.BinaryMessage, b)
	})
	_ = o.Set("ping", func() {
		if s.done || s.closing {
			return
		}
		if err := s.sess.Ping(); err != nil {
			s.emitError(err)
		}
	})
	_ = o.Set("close", func(call sobek.FunctionCall) sobek.Value {
		code := websocket.CloseGoingAway
		if c := call.Argument(0); !sobek.IsUndefined(c) && !sobek.IsNull(c) {
			code = int(c.ToInteger())
		}
		s.close(code)
		return sobek.Undefined()
	})
	_ = o.Set("setTimeout", func(fn sobek.Value, ms float64) { s.timer(fn, ms, false) })
	_ = o.Set("setInterval", func(fn sobek.Value, ms float64) { s.timer(fn, ms, true) })
	return o
}

func (s *socket) write(kind int, b []byte) {
	if s.done || s.closing {
		return
	}
	if err := s.sess.Conn.WriteMessage(kind, b); err != nil {
		s.emitError(err)
		return
	}
	s.sess.Sent(time.Now())
}

func (s *socket) timer(fn sobek.Value, ms float64, repeat bool) {
	f, ok := sobek.AssertFunction(fn)
	if !ok {
		panic(s.rt.NewTypeError("socket.setTimeout and socket.setInterval need a function"))
	}
	d := time.Duration(ms * float64(time.Millisecond))
	if repeat && d <= 0 {
		panic(s.rt.NewTypeError("socket.setInterval needs an interval above 0"))
	}
	t := &sockTimer{fn: f, repeat: repeat, every: d}
	s.timers = append(s.timers, t)
	t.t = time.AfterFunc(d, func() { s.post(event{kind: "timer", t: t}) })
}

// close starts the closing handshake; the session ends when the server
// answers or wsclient.CloseWait passed.
func (s *socket) close(code int) {
	if s.done || s.closing {
		return
	}
	s.closing = true
	_ = s.sess.Close(code, "")
}

func (s *socket) emitError(err error) {
	if len(s.handlers["error"]) == 0 {
		return
	}
	e := s.rt.NewObject()
	_ = e.Set("error", func() string { return err.Error() })
	s.call("error", e)
}

// call runs the handlers of ev; a thrown exception ends the session and
// fails the iteration.
func (s *socket) call(ev string, args ...sobek.Value) {
	for _, f := range s.handlers[ev] {
		if _, err := f(sobek.Undefined(), args...); err != nil {
			panic(err)
		}
	}
}

// read pumps frames into the loop until the connection fails or closes.
func (s *socket) read() {
	s.sess.Read(func(f wsclient.Frame) {
		s.post(event{kind: f.Kind, data: f.Data, at: f.At, code: f.Code, err: f.Err})
	})
}

// run dispatches events until the session ended or the iteration was
// interrupted. It returns the exception a handler threw.
func (s *socket) run(interrupted <-chan struct{}) (err error) {
	s.readDone = make(chan struct{})
	go func() {
		defer close(s.readDone)
		s.read()
	}()
	defer func() {
		if r := recover(); r != nil {
			s.finish()
			if e, ok := r.(error); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	s.call("open")
	for {
		select {
		case ev := <-s.events:
			if s.dispatch(ev) {
				s.finish()
				return nil
			}
		case <-interrupted:
			s.finish()
			return nil
		}
	}
}

// dispatch handles one event and reports whether the session ended.
func (s *socket) dispatch(ev event) bool {
	switch ev.kind {
	case "message":
		s.sess.Received(ev.at)
		s.call("message", s.rt.ToValue(string(ev.data)))
	case "binary":
		s.sess.Received(ev.at)
		s.call("binary", s.rt.ToValue(s.rt.NewArrayBuffer(ev.data)))
	case "ping":
		s.call("ping")
	case "pong":
		s.sess.Pong(ev.data, ev.at)
		s.call("pong")
	case "timer":
		t := ev.t
		if s.done || s.closing {
			return false
		}
		if t.repeat {
			t.t.Reset(t.every)
		}
		if _, err := t.fn(sobek.Undefined()); err != nil {
			panic(err)
		}
	case "closed":
		s.done = true
		if ev.err != nil && !s.closing {
			s.emitError(ev.err)
		}
		s.call("close", s.rt.ToValue(ev.code))
		return true
	}
	return false
}

// finish drops the connection, stops the timers, waits for the reader and
// records the session's end.
func (s *socket) finish() {
	if s.sess == nil {
		return
	}
	s.done = true
	for _, t := range s.timers {
		t.t.Stop()
	}
	close(s.quit)
	_ = s.sess.Conn.Close()
	if s.readDone != nil {
		<-s.readDone
	}
	s.sess.End(time.Now())
	s.sess = nil
}
