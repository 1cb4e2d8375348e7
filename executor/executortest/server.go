package executortest

import (
	"sync"
	"time"

	"github.com/metronome-load/metronome/executor"
)

// Server is a target whose capacity is known, for executors tested in
// virtual time: a FIFO line in front of workers that each take service per
// request, so it serves workers/service requests a second and queues the
// rest. A request sent at t is answered once the first worker free at or
// after t has served it. It is safe for concurrent use.
type Server struct {
	mu      sync.Mutex
	service time.Duration
	free    []time.Time // when each worker is next free
}

// NewServer returns a server of workers that each take service.
func NewServer(workers int, service time.Duration) *Server {
	return &Server{service: service, free: make([]time.Time, workers)}
}

// Work is the duration of a request sent at at, Work for the fake VUs.
func (s *Server) Work(_ executor.Iteration, at time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := 0
	for i := range s.free {
		if s.free[i].Before(s.free[w]) {
			w = i
		}
	}
	begin := at
	if s.free[w].After(at) {
		begin = s.free[w]
	}
	s.free[w] = begin.Add(s.service)
	return s.free[w].Sub(at)
}
