// Package poolserver is a loopback HTTP server whose capacity is known: a
// fixed pool of Workers, each taking Service per request, serves at most
// Workers/Service requests a second; requests beyond that wait in line for
// a worker. The capacity-search tests look for its capacity, which Measure
// checks against what the server really serves on the machine at hand.
package poolserver

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a running pool server.
type Server struct {
	// URL is the server's address, http://127.0.0.1:port/.
	URL string

	workers chan struct{}
	service time.Duration
	served  atomic.Int64
	srv     *http.Server
	ln      net.Listener
	done    chan struct{}
}

// Start serves on a free loopback port with the given pool: each request
// holds one of workers for service (it sleeps: the pool, not the CPU, is
// the limit), then answers 200 with a short body.
func Start(workers int, service time.Duration) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/", workers: make(chan struct{}, workers),
		service: service, ln: ln, done: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	select {
	case s.workers <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	time.Sleep(s.service)
	<-s.workers
	s.served.Add(1)
	_, _ = w.Write([]byte("ok\n"))
}

// Served counts the requests answered so far.
func (s *Server) Served() int64 { return s.served.Load() }

// Close stops the server and waits for it.
func (s *Server) Close() {
	_ = s.srv.Close()
	<-s.done
}

// Measure saturates the server for d with clients concurrent keep-alive
// clients, each sending its next request as soon as the last is answered,
// and returns the requests it served per second: its real capacity here,
// with whatever this machine adds to the service time. clients should
// exceed the workers so that the pool never waits for a request.
func (s *Server) Measure(ctx context.Context, clients int, d time.Duration) (float64, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	before := s.Served()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						errOnce.Do(func() { firstErr = err })
					}
					return
				}
				_ = resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	rate := float64(s.Served()-before) / time.Since(start).Seconds()
	return rate, firstErr
}
