//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"
)

// server is the target of every load: a Go net/http server on loopback
// whose handler writes a short body, so that the generator, not the
// server, is what the figures are about.
type server struct {
	URL string
	srv *http.Server
	// conns counts the connections the server accepted, to tell whether
	// the client keeps its connections alive.
	conns atomic.Int64
	// started is when a script last requested /started (Unix ns): the
	// idle measure's mark of a generator's start-up.
	started atomic.Int64
}

func startServer() (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	body := []byte("ok\n")
	srv := &server{URL: "http://" + ln.Addr().String() + "/"}
	srv.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/started" {
				srv.started.Store(time.Now().UnixNano())
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write(body)
		}),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				srv.conns.Add(1)
			}
		},
		ReadHeaderTimeout: 30 * time.Second,
	}
	go func() { _ = srv.srv.Serve(ln) }()
	return srv, nil
}

// Close stops the server and closes its connections.
func (s *server) Close() { _ = s.srv.Close() }

// loadResult is what one metronome or k6 run left behind: the process's
// figures and the summary it wrote.
type loadResult struct {
	procResult
	// Summary is the decoded --summary-export file or the JSON the
	// script's handleSummary wrote.
	Summary map[string]any
}

// load describes one run of a k6 script.
type load struct {
	name   string // for file names and messages
	script string // the JavaScript test
	args   []string
	// summary is the summary file's name in the scratch directory; the
	// caller passes it with --summary-export or to handleSummary via -e.
	summary string
	// limit bounds the whole run; the process is killed after it.
	limit time.Duration
}

// run runs the script with metronome.
func (b *bench) run(ctx context.Context, l load) (*loadResult, error) {
	return b.runScript(ctx, b.bin, l)
}

// runScript writes the script, runs `bin run` on it (metronome or k6,
// which take the same arguments) and collects the process's resource
// usage and the summary it wrote.
func (b *bench) runScript(ctx context.Context, bin string, l load) (*loadResult, error) {
	path := filepath.Join(b.dir, l.name+".js")
	if err := os.WriteFile(path, []byte(l.script), 0o644); err != nil {
		return nil, err
	}
	sumPath := filepath.Join(b.dir, l.summary)
	_ = os.Remove(sumPath)
	args := append([]string{"run"}, l.args...)
	args = append(args, "-e", "TARGET="+b.target, path)
	pr, err := b.spawn(ctx, l.name, l.limit, bin, args...)
	if err != nil {
		return nil, err
	}
	res := &loadResult{procResult: *pr}
	data, err := os.ReadFile(sumPath)
	if err != nil {
		return nil, fmt.Errorf("%s wrote no summary: %v; output ends with:\n%s", l.name, err, lastBytes(res.Stdout))
	}
	if err := json.Unmarshal(data, &res.Summary); err != nil {
		return nil, fmt.Errorf("%s: summary %s: %v", l.name, sumPath, err)
	}
	return res, nil
}

// metric returns one value of a metric from a summary: the flat
// --summary-export shape ({"iterations": {"count": …}}) or handleSummary's
// data ({"iterations": {"values": {"count": …}}}).
func (r *loadResult) metric(name, key string) (float64, bool) {
	ms, _ := r.Summary["metrics"].(map[string]any)
	m, _ := ms[name].(map[string]any)
	if vals, ok := m["values"].(map[string]any); ok {
		m = vals
	}
	v, ok := m[key].(float64)
	return v, ok
}

// mustMetric is metric for values the run must have produced.
func (r *loadResult) mustMetric(name, key string) (float64, error) {
	v, ok := r.metric(name, key)
	if !ok {
		return 0, fmt.Errorf("the summary has no %s %s", name, key)
	}
	return v, nil
}

// tail keeps the last few kilobytes written to it, for error messages.
type tail struct{ buf []byte }

const tailSize = 4 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	b := t.buf
	if len(b) > tailSize {
		b = b[len(b)-tailSize:]
	}
	return string(bytes.TrimSpace(b))
}

// selfCPU is this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
