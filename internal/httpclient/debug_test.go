package httpclient

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// slowHandler is a log handler that takes pause to write each record: a
// dump that is slow to build or to write.
type slowHandler struct {
	pause time.Duration
	lines *atomic.Int32
}

func (h slowHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h slowHandler) Handle(context.Context, slog.Record) error {
	time.Sleep(h.pause)
	h.lines.Add(1)
	return nil
}

func (h slowHandler) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h slowHandler) WithGroup(string) slog.Handler { return h }

// TestDebugDumpOutsideTimings checks that --http-debug=full's dumps, of a
// large body through a redirect, stay out of every hop's timings, as k6's
// dump stays out of its: each of the four dump lines takes pause, so a
// dump inside a hop would make its Total at least pause, and Do as a whole
// takes at least four.
func TestDebugDumpOutsideTimings(t *testing.T) {
	const pause = time.Second
	big := strings.Repeat("x", 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/r" {
			http.Redirect(w, r, "/ok", http.StatusTemporaryRedirect)
			return
		}
		_, _ = io.WriteString(w, big)
	}))
	t.Cleanup(srv.Close)
	client := NewClient(Options{})
	t.Cleanup(client.CloseIdleConnections)
	target, err := ParseTarget(srv.URL + "/r")
	if err != nil {
		t.Fatal(err)
	}
	for name, lane := range map[string]func() *Lane{"a lane": NewLane, "no lane": func() *Lane { return nil }} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var lines atomic.Int32
			req := &Request{Method: http.MethodPost, URL: target, Header: http.Header{}, Body: big, HasBody: true,
				Timeout: time.Minute, Redirects: 10, Debug: DebugFull, DebugLog: slog.New(slowHandler{pause, &lines})}
			begin := time.Now()
			res := Do(context.Background(), client.Transport, req, lane())
			elapsed := time.Since(begin)
			if len(res.Hops) != 2 || res.Failure() != nil || res.Hops[1].Status != http.StatusOK || len(res.Body) != len(big) {
				t.Fatalf("%d hops, failure %v, body %d bytes", len(res.Hops), res.Failure(), len(res.Body))
			}
			if n := lines.Load(); n != 4 || elapsed < 4*pause {
				t.Fatalf("%d dump lines in %v, want 4 taking at least %v", n, elapsed, 4*pause)
			}
			for i, h := range res.Hops {
				if total := h.Timings.Total(); total >= pause {
					t.Errorf("hop %d: timings %+v (total %v) hold a dump's %v", i, h.Timings, total, pause)
				}
			}
		})
	}
}
