// Package faultserver is a loopback HTTP/1.1 server that misbehaves on
// purpose, one way per server: it refuses, resets, never answers, answers
// slowly, answers garbage, cuts bodies short, lies about their length or
// breaks their framing. Tests point a client at it and check what the
// client records; it writes every byte itself, so the faults are exact.
//
// It listens on 127.0.0.1 only. Every connection it holds is closed by
// Close, so a test that forgets nothing leaves nothing behind.
package faultserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is how a server misbehaves.
type Mode string

// The modes. Each answers every request on a connection the same way;
// those that end the connection do so after the first.
const (
	// OK answers 200 with the body "ok" and keeps the connection: the
	// control case.
	OK Mode = "ok"
	// Refuse has no listener: connecting is refused.
	Refuse Mode = "refuse"
	// ResetBeforeRequest resets each connection as soon as it is accepted.
	ResetBeforeRequest Mode = "reset-before-request"
	// ResetAfterRequest reads the request, then resets the connection.
	ResetAfterRequest Mode = "reset-after-request"
	// CloseAfterRequest reads the request, then closes the connection
	// cleanly without a byte of answer.
	CloseAfterRequest Mode = "close-after-request"
	// Blackhole reads the request and never answers.
	Blackhole Mode = "blackhole"
	// SlowHead writes the response head one byte per Step, then "ok".
	SlowHead Mode = "slow-head"
	// SlowBody writes the head at once, then a 20-byte body one byte per
	// Step.
	SlowBody Mode = "slow-body"
	// Garbage answers a line that is not HTTP and closes.
	Garbage Mode = "garbage"
	// CutBody announces Content-Length: 100000, sends 1,000 bytes and
	// closes.
	CutBody Mode = "cut-body"
	// LengthTooLong announces 100 bytes, sends 10 and keeps the connection
	// open: the client waits for bytes that never come.
	LengthTooLong Mode = "length-too-long"
	// LengthTooShort announces 2 bytes ("ok") and sends 7 ("okEXTRA"): the
	// surplus lies on the connection where the next answer should start.
	LengthTooShort Mode = "length-too-short"
	// ChunkedBadSize sends a chunked body whose chunk size is not hex.
	ChunkedBadSize Mode = "chunked-bad-size"
	// ChunkedCut sends one chunk of a chunked body and closes before the
	// last chunk.
	ChunkedCut Mode = "chunked-cut"
	// Informational sends 103 Early Hints, then 200 "ok".
	Informational Mode = "informational"
	// NoContent answers 204 with a Content-Length: 5 header and no body,
	// which a 204 cannot have.
	NoContent Mode = "no-content"
	// NotModified answers 304 with Content-Length: 10 and no body.
	NotModified Mode = "not-modified"
	// HeadLength answers every request, HEAD too, with Content-Length: 100;
	// a HEAD gets no body, a GET gets the 100 bytes.
	HeadLength Mode = "head-length"
	// Big sends a body of Size bytes (100 MB when Size is 0), fast.
	Big Mode = "big"
	// HugeHead sends a response head with one header line of Size bytes,
	// then "ok".
	HugeHead Mode = "huge-head"
	// StallLength announces a body of Size bytes, sends 10 and holds the
	// connection: a client that sizes its buffer by the announcement
	// pays for bytes that never come.
	StallLength Mode = "stall-length"
	// StallChunk announces a chunk of Size bytes, sends 10 of them and
	// holds the connection.
	StallChunk Mode = "stall-chunk"
	// StallBrotli announces a brotli body of Size bytes, sends the 4 bytes
	// that claim a 16 MiB window and a 16 MiB uncompressed block, and
	// holds the connection.
	StallBrotli Mode = "stall-brotli"
)

// Modes lists every mode, in the order of the constants.
var Modes = []Mode{
	OK, Refuse, ResetBeforeRequest, ResetAfterRequest, CloseAfterRequest, Blackhole, SlowHead, SlowBody,
	Garbage, CutBody, LengthTooLong, LengthTooShort, ChunkedBadSize, ChunkedCut, Informational, NoContent,
	NotModified, HeadLength, Big, HugeHead, StallLength, StallChunk, StallBrotli,
}

// Server is one misbehaving server. Set Mode (and Step, Size where they
// matter) before Start.
type Server struct {
	Mode Mode
	// Step is the pause between two bytes of SlowHead and SlowBody; 10 ms
	// when zero.
	Step time.Duration
	// Size is the body length of Big and the Stall modes and HugeHead's
	// header line length; 100 MB when zero.
	Size int64

	l        net.Listener
	addr     string
	requests atomic.Int64
	conns    atomic.Int64
	mu       sync.Mutex
	open     map[net.Conn]struct{}
	closed   chan struct{}
	wg       sync.WaitGroup
}

// Start listens on a loopback port and serves until Close. A Refuse
// server reserves a port and frees it again, so nothing listens there.
func (s *Server) Start() error {
	known := false
	for _, m := range Modes {
		known = known || m == s.Mode
	}
	if !known {
		return fmt.Errorf("faultserver: unknown mode %q", s.Mode)
	}
	if s.Step <= 0 {
		s.Step = 10 * time.Millisecond
	}
	if s.Size <= 0 {
		s.Size = 100 << 20
	}
	s.open = make(map[net.Conn]struct{})
	s.closed = make(chan struct{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.addr = l.Addr().String()
	if s.Mode == Refuse {
		return l.Close()
	}
	s.l = l
	s.wg.Add(1)
	go s.accept()
	return nil
}

// URL is the server's base URL, http://127.0.0.1:port.
func (s *Server) URL() string { return "http://" + s.addr }

// Requests is the number of requests read so far.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Conns is the number of connections accepted so far.
func (s *Server) Conns() int64 { return s.conns.Load() }

// Close stops listening and closes every connection, as a server that
// goes away does. It waits for the server's goroutines to end.
func (s *Server) Close() {
	if s.l == nil {
		return
	}
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return
	default:
	}
	close(s.closed)
	_ = s.l.Close()
	for c := range s.open {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		select {
		case <-s.closed:
			s.mu.Unlock()
			_ = c.Close()
			return
		default:
		}
		s.open[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.conns.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
			s.mu.Lock()
			delete(s.open, c)
			s.mu.Unlock()
			_ = c.Close()
		}()
	}
}

// reset closes c with an RST instead of a FIN.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// serve answers the requests of one connection until the mode ends it or
// the client goes.
func (s *Server) serve(c net.Conn) {
	if s.Mode == ResetBeforeRequest {
		reset(c)
		return
	}
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		s.requests.Add(1)
		if !s.answer(c, req) {
			return
		}
	}
}

// answer writes the mode's answer to req. It returns false when the
// connection must end.
func (s *Server) answer(c net.Conn, req *http.Request) bool {
	w := func(parts ...string) bool {
		_, err := io.WriteString(c, strings.Join(parts, ""))
		return err == nil
	}
	switch s.Mode {
	case OK:
		if req.Method == http.MethodHead {
			return w("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")
		}
		return w("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	case ResetAfterRequest:
		reset(c)
		return false
	case CloseAfterRequest:
		return false
	case Blackhole, LengthTooLong:
		if s.Mode == LengthTooLong {
			w("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", strings.Repeat("x", 10))
		}
		// Hold the connection until the client or Close ends it.
		_, _ = io.Copy(io.Discard, c)
		return false
	case SlowHead:
		head := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"
		for i := 0; i < len(head); i++ {
			if !s.pause() || !w(head[i:i+1]) {
				return false
			}
		}
		return w("ok")
	case SlowBody:
		if !w("HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n") {
			return false
		}
		for i := 0; i < 20; i++ {
			if !s.pause() || !w("b") {
				return false
			}
		}
		return true
	case Garbage:
		w("this is not HTTP\r\n\r\n")
		return false
	case CutBody:
		w("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", strings.Repeat("x", 1000))
		return false
	case LengthTooShort:
		return w("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA")
	case ChunkedBadSize:
		w("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
		return false
	case ChunkedCut:
		w("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
		return false
	case Informational:
		return w("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n",
			"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	case NoContent:
		return w("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n")
	case NotModified:
		return w("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n")
	case HeadLength:
		if req.Method == http.MethodHead {
			return w("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
		}
		return w("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", strings.Repeat("h", 100))
	case Big:
		if !w("HTTP/1.1 200 OK\r\nContent-Length: ", strconv.FormatInt(s.Size, 10), "\r\n\r\n") {
			return false
		}
		return s.fill(c, s.Size)
	case HugeHead:
		return w("HTTP/1.1 200 OK\r\nX-Huge: ") && s.fill(c, s.Size) && w("\r\nContent-Length: 2\r\n\r\nok")
	case StallLength, StallChunk, StallBrotli:
		size := strconv.FormatInt(s.Size, 10)
		switch s.Mode {
		case StallLength:
			w("HTTP/1.1 200 OK\r\nContent-Length: ", size, "\r\n\r\n", strings.Repeat("x", 10))
		case StallChunk:
			w("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", strconv.FormatInt(s.Size, 16), "\r\n", strings.Repeat("x", 10))
		case StallBrotli:
			// WBITS 24; a block that is not the last, of 2^24 bytes, stored
			// uncompressed.
			w("HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: ", size, "\r\n\r\n\xcf\xff\xff\xff")
		}
		_, _ = io.Copy(io.Discard, c)
		return false
	}
	return false
}

// fill writes n bytes of letters to c.
func (s *Server) fill(c net.Conn, n int64) bool {
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = 'a' + byte(i%26)
	}
	for left := n; left > 0; {
		m := min(left, int64(len(buf)))
		if _, err := c.Write(buf[:m]); err != nil {
			return false
		}
		left -= m
	}
	return true
}

// pause waits one Step, or returns false when the server closes.
func (s *Server) pause() bool {
	t := time.NewTimer(s.Step)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.closed:
		return false
	}
}
