// Package wsclient holds what k6/ws and k6/websockets share: the ws_*
// metric definitions, the handshake with byte counting, the tags k6 puts on
// WebSocket samples, the session's read loop, timed pings and closing
// handshake, and the conversion of script values to connection options.
package wsclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/dialer"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

// Metrics are the ws_* metrics with k6's names, types and units.
type Metrics struct {
	Sessions, MsgsSent, MsgsReceived  *metrics.Metric
	Connecting, SessionDuration, Ping *metrics.Metric
	dataSent, dataReceived            *metrics.Metric
	registry                          *metrics.Registry
}

// Define defines the ws_* metrics in r, or returns the existing ones.
func Define(r *metrics.Registry) (*Metrics, error) {
	m := &Metrics{registry: r}
	if err := r.NewAll(
		metrics.Def{To: &m.Sessions, Name: "ws_sessions", Type: metrics.Counter, Contains: metrics.Default},
		metrics.Def{To: &m.MsgsSent, Name: "ws_msgs_sent", Type: metrics.Counter, Contains: metrics.Default},
		metrics.Def{To: &m.MsgsReceived, Name: "ws_msgs_received", Type: metrics.Counter, Contains: metrics.Default},
		metrics.Def{To: &m.Connecting, Name: "ws_connecting", Type: metrics.Trend, Contains: metrics.Time},
		metrics.Def{To: &m.SessionDuration, Name: "ws_session_duration", Type: metrics.Trend, Contains: metrics.Time},
		metrics.Def{To: &m.Ping, Name: "ws_ping", Type: metrics.Trend, Contains: metrics.Time},
	); err != nil {
		return nil, err
	}
	return m, nil
}

// ForVU returns the metrics of the registry vu's init context sees; in
// the init context of a VU without a registry it returns nil and the
// metrics are defined on first use from the VU's state.
func ForVU(vu modules.VU) (*Metrics, error) {
	if env := vu.InitEnv(); env != nil && env.Registry != nil {
		return Define(env.Registry)
	}
	return nil, nil
}

// Resolve returns m, defining the metrics in st's registry when m is nil.
func Resolve(m *Metrics, st *modules.State) (*Metrics, error) {
	if m != nil || st.Registry == nil {
		return m, nil
	}
	return Define(st.Registry)
}

// Params are the handshake's settings.
type Params struct {
	URL          string
	Header       http.Header
	Subprotocols []string
	Compression  bool
	// Tags are the user's tags for this session (params.tags).
	Tags map[string]string
	// NameTag adds name=url, as k6/websockets does.
	NameTag bool
}

// SetFrom reads headers, tags and compression from the params object both
// modules take; an absent object leaves p as it is.
func (p *Params) SetFrom(rt *sobek.Runtime, v sobek.Value) error {
	if sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil
	}
	o := v.ToObject(rt)
	p.Header = Headers(rt, o.Get("headers"))
	p.Tags = Tags(rt, o.Get("tags"))
	var err error
	p.Compression, err = Compression(o.Get("compression"))
	return err
}

// CloseWait bounds how long a closing session waits for the server's
// answer, and how long a control frame may take to write.
const CloseWait = 2 * time.Second

// Session is one connection with its accounting. Prepare and the
// recording methods run on the VU goroutine; Dial may run on any.
type Session struct {
	Conn  *websocket.Conn
	Resp  *http.Response
	Tags  *metrics.TagSet
	Start time.Time

	st         *modules.State
	m          *Metrics
	p          Params
	base       *metrics.TagSet
	dialer     websocket.Dialer
	header     http.Header
	began      time.Time
	sent, recv atomic.Int64
	pings      map[string]time.Time
	pingSeq    int
}

// Prepare captures, on the VU goroutine, what a later Dial needs from the
// VU's state: options and the tags in force when the script asked for the
// connection.
func Prepare(st *modules.State, m *Metrics, p Params) *Session {
	s := &Session{st: st, m: m, p: p, base: st.Tags}
	o := st.Options
	if o == nil {
		o = &config.Options{}
	}
	fence := dialer.New(net.Dialer{Timeout: 60 * time.Second}, o.BlacklistIPs, o.BlockHostnames, o.Hosts).WithNetwork(st.Options.Network(), st.VUID)
	s.dialer = websocket.Dialer{
		HandshakeTimeout:  60 * time.Second,
		Subprotocols:      p.Subprotocols,
		EnableCompression: p.Compression,
		Proxy:             fence.Proxy(http.ProxyFromEnvironment),
		// The test's TLS options, as k6 applies them to WebSocket
		// handshakes too (client certificates included).
		TLSClientConfig: o.TLSConfig(),
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			c, err := fence.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &countingConn{Conn: c, s: s}, nil
		},
	}
	s.header = p.Header
	if s.header == nil {
		s.header = http.Header{}
	}
	if s.header.Get("User-Agent") == "" && st.Options != nil && st.Options.UserAgent != nil && *st.Options.UserAgent != "" {
		s.header.Set("User-Agent", *st.Options.UserAgent)
	}
	return s
}

// Dial performs the handshake. On failure it returns the response
// (nil unless the server answered, e.g. a bad handshake) and Go's error,
// whose text scripts see as k6 gives it.
func (s *Session) Dial(ctx context.Context) (*http.Response, error) {
	s.began = time.Now()
	conn, resp, err := s.dialer.DialContext(ctx, s.p.URL, s.header)
	s.Start = time.Now()
	s.Resp = resp
	if err != nil {
		return resp, err
	}
	s.Conn = conn
	return resp, nil
}

// Opened records ws_sessions and ws_connecting for a Dial, and the
// connect's corrected_latency with ws_connecting's tags. k6 records them
// for a failed Dial too (a session that never opened still counts, and
// its user waited), so it is called whatever Dial returned; the status
// and subproto tags are there only when the server answered.
func (s *Session) Opened() {
	st := s.st
	subproto := ""
	if s.Conn != nil {
		subproto = s.Conn.Subprotocol()
	}
	s.Tags = sessionTags(st, s.base, s.p, s.Resp, subproto)
	if s.m != nil && st.Recorder != nil {
		st.Recorder.Record(metrics.Sample{Metric: s.m.Sessions, Tags: s.Tags, Time: s.Start, Value: 1})
		st.Recorder.Record(metrics.Sample{Metric: s.m.Connecting, Tags: s.Tags, Time: s.Start, Value: metrics.Milliseconds(s.Start.Sub(s.began))})
		jsmod.RecordLatency(st, s.Tags, s.Start, s.Start.Sub(s.began))
	}
}

// sessionTags are the VU's tags, the user's, and the system tags k6 v2.2.0
// puts on ws_* samples: url, status and subproto when the server answered
// (resp is not nil), and name for k6/websockets.
func sessionTags(st *modules.State, t *metrics.TagSet, p Params, resp *http.Response, subproto string) *metrics.TagSet {
	if t == nil {
		t = metrics.EmptyTags
	}
	for k, v := range p.Tags {
		t = t.With(k, v)
	}
	on := func(name string) bool { return st.SystemTags == nil || st.SystemTags[name] }
	if on("url") {
		t = t.With("url", p.URL)
	}
	if p.NameTag && on("name") {
		if _, ok := p.Tags["name"]; !ok {
			t = t.With("name", p.URL)
		}
	}
	if resp == nil {
		return t
	}
	if on("status") {
		t = t.With("status", strconv.Itoa(resp.StatusCode))
	}
	if on("subproto") {
		t = t.With("subproto", subproto)
	}
	return t
}

// Sent records one message sent.
func (s *Session) Sent(at time.Time) { s.count(s.m.MsgsSent, at) }

// Received records one message received.
func (s *Session) Received(at time.Time) { s.count(s.m.MsgsReceived, at) }

// Ping sends a ping with a payload of its own numbering, remembered so
// that Pong can time the answer. It runs on the VU goroutine.
func (s *Session) Ping() error {
	if s.pings == nil {
		s.pings = map[string]time.Time{}
	}
	s.pingSeq++
	payload := strconv.Itoa(s.pingSeq)
	s.pings[payload] = time.Now()
	return s.Conn.WriteControl(websocket.PingMessage, []byte(payload), time.Now().Add(CloseWait))
}

// Pong records ws_ping for a pong received at that answers one of Ping's
// pings; other pongs are not timed. It runs on the VU goroutine.
func (s *Session) Pong(data []byte, at time.Time) {
	sent, ok := s.pings[string(data)]
	if !ok {
		return
	}
	delete(s.pings, string(data))
	if s.m != nil && s.st.Recorder != nil {
		s.st.Recorder.Record(metrics.Sample{Metric: s.m.Ping, Tags: s.Tags, Time: at, Value: metrics.Milliseconds(at.Sub(sent))})
	}
}

// Close starts the closing handshake: it sends a close frame and gives
// the server CloseWait to answer before reads fail. It returns the
// write's error.
func (s *Session) Close(code int, reason string) error {
	err := s.Conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(CloseWait))
	_ = s.Conn.SetReadDeadline(time.Now().Add(CloseWait))
	return err
}

// Frame is one thing Read saw on the connection.
type Frame struct {
	Kind string // message, binary, ping, pong or closed
	Data []byte
	At   time.Time
	// Code and Text are the close frame's, for closed; Code is 1006 and
	// Err the failure when the connection broke without one.
	Code int
	Text string
	Err  error
}

// Read hands every frame of the connection to post until it ends, the
// last being closed. It answers the server's pings and close frames.
func (s *Session) Read(post func(Frame)) {
	c := s.Conn
	c.SetPingHandler(func(data string) error {
		post(Frame{Kind: "ping", At: time.Now()})
		err := c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(CloseWait))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	c.SetPongHandler(func(data string) error {
		post(Frame{Kind: "pong", Data: []byte(data), At: time.Now()})
		return nil
	})
	c.SetCloseHandler(func(code int, text string) error {
		// Answer the server's close; if we started the closing, this
		// write fails harmlessly.
		_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(CloseWait))
		return nil
	})
	for {
		kind, data, err := c.ReadMessage()
		if err != nil {
			f := Frame{Kind: "closed", Code: websocket.CloseAbnormalClosure, Err: err, At: time.Now()}
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				f.Code, f.Text, f.Err = ce.Code, ce.Text, nil
			}
			post(f)
			return
		}
		k := "message"
		if kind == websocket.BinaryMessage {
			k = "binary"
		}
		post(Frame{Kind: k, Data: data, At: time.Now()})
	}
}

func (s *Session) count(m *metrics.Metric, at time.Time) {
	if s.m != nil && s.st.Recorder != nil {
		s.st.Recorder.Record(metrics.Sample{Metric: m, Tags: s.Tags, Time: at, Value: 1})
	}
}

// End records ws_session_duration and adds the bytes the session moved
// to the iteration's data_sent and data_received, which the VU records
// once per iteration, as k6 does.
func (s *Session) End(at time.Time) {
	st := s.st
	if st.Recorder == nil {
		return
	}
	if s.m != nil {
		st.Recorder.Record(metrics.Sample{Metric: s.m.SessionDuration, Tags: s.Tags, Time: at, Value: metrics.Milliseconds(at.Sub(s.Start))})
	}
	s.CountBytes()
}

// CountBytes adds the bytes the session moved since the last call to the
// iteration's data_sent and data_received. It runs on the VU goroutine.
func (s *Session) CountBytes() {
	s.st.DataSent += s.sent.Swap(0)
	s.st.DataReceived += s.recv.Swap(0)
}

// countingConn counts the bytes a session moves, handshake included.
type countingConn struct {
	net.Conn
	s *Session
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.s.recv.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.s.sent.Add(int64(n))
	return n, err
}

// Headers reads a script's headers object.
func Headers(rt *sobek.Runtime, v sobek.Value) http.Header {
	h := http.Header{}
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return h
	}
	o := v.ToObject(rt)
	for _, k := range o.Keys() {
		h.Set(k, o.Get(k).String())
	}
	return h
}

// Tags reads a script's tags object.
func Tags(rt *sobek.Runtime, v sobek.Value) map[string]string {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil
	}
	o := v.ToObject(rt)
	m := make(map[string]string, len(o.Keys()))
	for _, k := range o.Keys() {
		m[k] = o.Get(k).String()
	}
	return m
}

// Compression reads params.compression: "" or "deflate".
func Compression(v sobek.Value) (bool, error) {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return false, nil
	}
	switch s := v.String(); s {
	case "":
		return false, nil
	case "deflate":
		return true, nil
	default:
		return false, fmt.Errorf("unsupported compression algorithm %q, only \"deflate\" is supported", s)
	}
}
