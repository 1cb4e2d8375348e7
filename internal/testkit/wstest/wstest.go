// Package wstest is a WebSocket server on loopback for the tests of
// k6/ws, k6/websockets and the end-to-end runs: it echoes every message,
// counts what it saw, and on request pings the client, closes the session
// with a given code, broadcasts, or holds its echoes until a stall ends.
package wstest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Server is a counting echo server.
type Server struct {
	URL string // ws://127.0.0.1:port
	srv *httptest.Server

	Sessions, Text, Binary, Pings, Closes atomic.Int64

	// StallFrom and StallUntil, set with SetStall, freeze the server: a
	// handshake or a message received in [StallFrom, StallUntil) is
	// answered at StallUntil.
	StallFrom, StallUntil time.Time

	mu    sync.Mutex
	conns map[*websocket.Conn]*sync.Mutex
	// Headers are the request headers of the last handshake.
	Headers http.Header
}

// Start starts a server on 127.0.0.1; it stops with the test.
func Start(tb interface{ Cleanup(func()) }) *Server {
	s := &Server{conns: map[*websocket.Conn]*sync.Mutex{}}
	up := websocket.Upgrader{EnableCompression: true, Subprotocols: []string{"chat", "echo"}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hold(time.Now())
		c, err := up.Upgrade(w, r, http.Header{"X-Echo": {"yes"}})
		if err != nil {
			return
		}
		s.serve(c, r)
	}))
	s.URL = "ws" + strings.TrimPrefix(s.srv.URL, "http")
	tb.Cleanup(s.srv.Close)
	return s
}

// SetStall freezes the server from from until until: the handshakes and
// messages it receives meanwhile are answered at until. The load comes
// from another process, which the race detector cannot see, so the
// setting is taken under the lock.
func (s *Server) SetStall(from, until time.Time) {
	s.mu.Lock()
	s.StallFrom, s.StallUntil = from, until
	s.mu.Unlock()
}

// hold waits until the end of the stall when now falls in it.
func (s *Server) hold(now time.Time) {
	s.mu.Lock()
	from, until := s.StallFrom, s.StallUntil
	s.mu.Unlock()
	if !from.IsZero() && !now.Before(from) && now.Before(until) {
		time.Sleep(time.Until(until))
	}
}

func (s *Server) serve(c *websocket.Conn, r *http.Request) {
	s.Sessions.Add(1)
	wmu := &sync.Mutex{}
	s.mu.Lock()
	s.conns[c] = wmu
	s.Headers = r.Header.Clone()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	c.SetPingHandler(func(data string) error {
		s.Pings.Add(1)
		wmu.Lock()
		defer wmu.Unlock()
		return c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	c.SetCloseHandler(func(code int, _ string) error {
		s.Closes.Add(1)
		wmu.Lock()
		defer wmu.Unlock()
		return c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(time.Second))
	})
	write := func(kind int, b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		return c.WriteMessage(kind, b)
	}
	for {
		kind, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		now := time.Now()
		if kind == websocket.BinaryMessage {
			s.Binary.Add(1)
		} else {
			s.Text.Add(1)
		}
		text := string(msg)
		switch {
		case text == "ping-me":
			wmu.Lock()
			_ = c.WriteControl(websocket.PingMessage, []byte("srv"), time.Now().Add(time.Second))
			wmu.Unlock()
			continue
		case strings.HasPrefix(text, "close-me:"):
			code, _ := strconv.Atoi(strings.TrimPrefix(text, "close-me:"))
			wmu.Lock()
			_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, "bye"), time.Now().Add(time.Second))
			wmu.Unlock()
			continue
		case strings.HasPrefix(text, "broadcast:"):
			s.mu.Lock()
			for o, m := range s.conns {
				m.Lock()
				_ = o.WriteMessage(websocket.TextMessage, msg)
				m.Unlock()
			}
			s.mu.Unlock()
			continue
		}
		s.hold(now)
		if err := write(kind, msg); err != nil {
			return
		}
	}
}
