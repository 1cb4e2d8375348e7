// Package stallserver is an HTTP target that answers at once but freezes
// every handler on a schedule: the "server that stalls" of metronome's
// reference experiments (docs/DESIGN.md §7). A request that arrives during a stall
// is held until the stall ends; requests outside stalls are answered
// immediately. It listens on loopback only.
package stallserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/clock"
)

// Schedule says when the server stalls: for Length, first at First after
// the start, then every Period (or only once when Once is set or Period is
// zero).
type Schedule struct {
	Length time.Duration
	Period time.Duration
	First  time.Duration
	Once   bool
}

// Validate reports a schedule that cannot be served.
func (s Schedule) Validate() error {
	switch {
	case s.Length < 0 || s.Period < 0 || s.First < 0:
		return errors.New("stall length, period and first stall must not be negative")
	case !s.Once && s.Period > 0 && s.Length >= s.Period:
		return fmt.Errorf("a stall of %s every %s would never end", s.Length, s.Period)
	}
	return nil
}

// StallEnd returns the end of the stall that covers offset (the time since
// the server started), or ok=false when the server is not stalled then.
func (s Schedule) StallEnd(offset time.Duration) (end time.Duration, ok bool) {
	if s.Length <= 0 || offset < s.First {
		return 0, false
	}
	since := offset - s.First
	if s.Once || s.Period <= 0 {
		if since < s.Length {
			return s.First + s.Length, true
		}
		return 0, false
	}
	k := since / s.Period
	start := s.First + k*s.Period
	if offset < start+s.Length {
		return start + s.Length, true
	}
	return 0, false
}

// Server is a stalling HTTP server.
type Server struct {
	Schedule Schedule
	// Clock is the server's time source; clock.Real when nil.
	Clock clock.Clock

	start time.Time
	srv   *http.Server
	ln    net.Listener
}

// New returns a server with schedule s. Call Start to listen.
func New(s Schedule) *Server { return &Server{Schedule: s} }

// Handler answers every request with 200 and a short body, after waiting
// out the stall it arrived in; a request for /delay/<ms> then takes that
// many milliseconds of service, as a server that does work would. The
// X-Held-Us header says how long the request was held by the stall.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		c := s.clock()
		held := time.Duration(0)
		if end, ok := s.Schedule.StallEnd(c.Now().Sub(s.start)); ok {
			held = end - c.Now().Sub(s.start)
			if !clock.Sleep(c, held, req.Context().Done()) {
				return
			}
		}
		if v, ok := strings.CutPrefix(req.URL.Path, "/delay/"); ok {
			ms, err := strconv.ParseFloat(v, 64)
			if err != nil || ms < 0 || ms > 60_000 {
				http.Error(w, "/delay/<ms>: want a number of milliseconds from 0 to 60000", http.StatusBadRequest)
				return
			}
			if !clock.Sleep(c, time.Duration(ms*float64(time.Millisecond)), req.Context().Done()) {
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Held-Us", strconv.FormatInt(held.Microseconds(), 10))
		_, _ = w.Write([]byte("ok\n"))
	})
}

func (s *Server) clock() clock.Clock {
	if s.Clock == nil {
		return clock.Real
	}
	return s.Clock
}

// Start listens on addr, which must be a loopback address ("127.0.0.1:0"
// picks a free port), and serves in the background. The stall schedule
// counts from this moment.
func (s *Server) Start(addr string) error {
	if err := s.Schedule.Validate(); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("listen address %q: the stall server only listens on loopback (127.0.0.1, ::1, localhost)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.ln = ln
	s.start = s.clock().Now()
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return nil
}

// Started is when the schedule began counting.
func (s *Server) Started() time.Time { return s.start }

// URL is the server's base URL, e.g. http://127.0.0.1:41234.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server, cutting held requests off.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}
