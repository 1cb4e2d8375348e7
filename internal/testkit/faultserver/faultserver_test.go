package faultserver

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestModesAnswerAndClose sends one request to a server of every mode and
// checks that Close ends the server at once, even with a client still
// connected to a blackhole.
func TestModesAnswerAndClose(t *testing.T) {
	for _, m := range Modes {
		s := &Server{Mode: m, Step: time.Millisecond, Size: 1 << 20}
		if err := s.Start(); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		c, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
		if m == Refuse {
			if err == nil {
				c.Close()
				t.Errorf("%s: the connection was accepted", m)
			}
			continue
		}
		switch {
		case err == nil:
			_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			var buf [64]byte
			_, _ = c.Read(buf[:])
			defer c.Close()
		case m != ResetBeforeRequest: // whose reset may come while dialling
			t.Fatalf("%s: %v", m, err)
		}
		done := make(chan struct{})
		go func() { s.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Close did not return", m)
		}
		if s.Conns() != 1 {
			t.Errorf("%s: %d connections accepted, want 1", m, s.Conns())
		}
	}
	if err := (&Server{Mode: "nonsense"}).Start(); err == nil {
		t.Error("an unknown mode started")
	}
}
