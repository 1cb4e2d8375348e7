// Package restapi serves k6's REST API (/v1) for a running test, with
// k6's JSON envelopes, so that k6-operator and other k6-aware tools can
// watch a metronome instance, start it when it waits paused, and stop it.
// Every answer hides the secrets the script fetched (package secrets):
// metric names, group names, setup data and error details come from the
// script.
package restapi

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/secrets"
)

// The run statuses k6 reports in GET /v1/status.
const (
	StatusCreated = iota
	StatusInitVUs
	StatusInitExecutors
	StatusInitDone
	StatusPausedBeforeRun
	StatusStarted
	StatusSetup
	StatusRunning
	StatusTeardown
	StatusEnded
	StatusInterrupted
)

// Status is the run's state as GET /v1/status reports it: the
// attributes of the status resource, in k6's order.
type Status struct {
	Status  int   `json:"status"`
	Paused  bool  `json:"paused"`
	VUs     int64 `json:"vus"`
	VUsMax  int64 `json:"vus-max"`
	Stopped bool  `json:"stopped"`
	Running bool  `json:"running"`
	Tainted bool  `json:"tainted"`
}

// Control is the running test as the API sees and steers it.
type Control interface {
	Status() Status
	// Resume starts a test that waits paused (--paused); resuming a
	// running test does nothing.
	Resume() error
	// Pause pauses the test; metronome's executors cannot pause once
	// started, as in k6 v2.
	Pause() error
	// Stop aborts the test (exit code 103).
	Stop()
	// Metrics are the observed metrics and the test time elapsed, for
	// counters' rates.
	Metrics() ([]metrics.ObservedMetric, time.Duration)
	// Groups are the paths of the groups seen ("::a::b").
	Groups() []string
	// SetupData is the current setup data, nil when none.
	SetupData() json.RawMessage
	// SetSetupData replaces it.
	SetSetupData(json.RawMessage)
	// RunSetup runs setup() and keeps and returns its data.
	RunSetup(ctx context.Context) (json.RawMessage, error)
	// RunTeardown runs teardown() with the current setup data.
	RunTeardown(ctx context.Context) error
}

// Server is a started REST API.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Listen binds addr ("host:port"; port 0 picks a free one).
func Listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

// Serve answers the API on ln for c until Close, with the secrets hide
// has handed out masked (nil hides nothing).
func Serve(ln net.Listener, c Control, hide *secrets.Store) *Server {
	h := &handler{c: c, hide: hide}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/status", h.getStatus)
	mux.HandleFunc("PATCH /v1/status", h.patchStatus)
	mux.HandleFunc("GET /v1/metrics", h.getMetrics)
	mux.HandleFunc("GET /v1/metrics/{id}", h.getMetric)
	mux.HandleFunc("GET /v1/groups", h.getGroups)
	mux.HandleFunc("GET /v1/groups/{id}", h.getGroup)
	mux.HandleFunc("GET /v1/setup", h.getSetup)
	mux.HandleFunc("PUT /v1/setup", h.putSetup)
	mux.HandleFunc("POST /v1/setup", h.postSetup)
	mux.HandleFunc("POST /v1/teardown", h.postTeardown)
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

// Addr is the address the API listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the API, letting requests in flight finish for up to a
// second.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		_ = s.srv.Close()
	}
}

type handler struct {
	c    Control
	hide *secrets.Store
}

// resource is one JSON:API resource object.
type resource struct {
	Type          string         `json:"type"`
	ID            string         `json:"id"`
	Attributes    any            `json:"attributes"`
	Relationships map[string]any `json:"relationships,omitempty"`
}

// writeJSON writes v as the answer, every fetched secret in it masked.
func (h *handler) writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"errors":[{"status":"500","title":"Internal Server Error"}]}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(append(h.hide.RedactJSON(b), '\n'))
}

func (h *handler) writeData(w http.ResponseWriter, data any) {
	h.writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// writeError writes k6's error envelope.
func (h *handler) writeError(w http.ResponseWriter, code int, title, detail string) {
	type apiError struct {
		Status string `json:"status"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
	h.writeJSON(w, code, map[string]any{"errors": []apiError{{strconv.Itoa(code), title, detail}}})
}

func statusResource(s Status) resource {
	return resource{Type: "status", ID: "default", Attributes: s}
}

func (h *handler) getStatus(w http.ResponseWriter, _ *http.Request) {
	h.writeData(w, statusResource(h.c.Status()))
}

// patchStatus takes k6's status envelope; only the attributes given act.
func (h *handler) patchStatus(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Data struct {
			Attributes struct {
				Paused  *bool            `json:"paused"`
				Stopped *bool            `json:"stopped"`
				VUs     *json.RawMessage `json:"vus"`
				VUsMax  *json.RawMessage `json:"vus-max"`
			} `json:"attributes"`
		} `json:"data"`
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(raw, &body)
	}
	if err != nil {
		h.writeError(w, http.StatusBadRequest, "Bad Request", "the body must be a status envelope: "+err.Error())
		return
	}
	a := body.Data.Attributes
	if a.VUs != nil || a.VUsMax != nil {
		h.writeError(w, http.StatusBadRequest, "Bad Request", "live VU configuration updates are not supported")
		return
	}
	if a.Stopped != nil && *a.Stopped {
		h.c.Stop()
	}
	if a.Paused != nil {
		op := h.c.Resume
		if *a.Paused {
			op = h.c.Pause
		}
		if err := op(); err != nil {
			h.writeError(w, http.StatusBadRequest, "Bad Request", err.Error())
			return
		}
	}
	h.writeData(w, statusResource(h.c.Status()))
}

// metricResource is one metric with the sample k6's API gives: a Trend's
// min, max, avg, med, p(90) and p(95) (always these; k6 ignores
// summaryTrendStats here), a Counter's count and rate, a Gauge's value, a
// Rate's rate.
func metricResource(m metrics.ObservedMetric, elapsed time.Duration) resource {
	sample := map[string]float64{}
	switch s := m.Sink.(type) {
	case *metrics.TrendSink:
		sample["min"], sample["max"], sample["avg"] = s.Min(), s.Max(), s.Avg()
		sample["med"], sample["p(90)"], sample["p(95)"] = s.Med(), s.Percentile(90), s.Percentile(95)
	case *metrics.CounterSink:
		sample["count"] = s.Sum
		if elapsed > 0 {
			sample["rate"] = s.Sum / elapsed.Seconds()
		} else {
			sample["rate"] = 0
		}
	case *metrics.GaugeSink:
		sample["value"] = s.Value
	case *metrics.RateSink:
		sample["rate"] = 0
		if s.Total > 0 {
			sample["rate"] = float64(s.Trues) / float64(s.Total)
		}
	}
	var tainted *bool
	if len(m.Thresholds) > 0 {
		t := m.Tainted
		tainted = &t
	}
	return resource{Type: "metrics", ID: m.Name, Attributes: metricAttributes{
		Type: m.Metric.Type.String(), Contains: m.Metric.Contains.String(),
		Tainted: tainted, Sample: sample,
	}}
}

// metricAttributes keeps k6's order of the attributes.
type metricAttributes struct {
	Type     string             `json:"type"`
	Contains string             `json:"contains"`
	Tainted  *bool              `json:"tainted"`
	Sample   map[string]float64 `json:"sample"`
}

func (h *handler) getMetrics(w http.ResponseWriter, _ *http.Request) {
	ms, elapsed := h.c.Metrics()
	out := make([]resource, 0, len(ms))
	for _, m := range ms {
		out = append(out, metricResource(m, elapsed))
	}
	h.writeData(w, out)
}

func (h *handler) getMetric(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ms, elapsed := h.c.Metrics()
	for _, m := range ms {
		// The id is the name as listed, masked where it holds a secret:
		// asking by the secret itself finds nothing, so the API cannot
		// confirm a guess.
		if h.hide.Redact(m.Name) == id {
			h.writeData(w, metricResource(m, elapsed))
			return
		}
	}
	h.writeError(w, http.StatusNotFound, "Not Found", "No metric with that ID was found")
}

// groupID is k6's group id: the hex MD5 of the group's path.
func groupID(path string) string {
	sum := md5.Sum([]byte(path))
	return hex.EncodeToString(sum[:])
}

func ref(path string) map[string]string {
	return map[string]string{"type": "groups", "id": groupID(path)}
}

// groupAttributes are a group's attributes; checks are left null.
type groupAttributes struct {
	Path   string `json:"path"`
	Name   string `json:"name"`
	Checks any    `json:"checks"`
}

// groupResources builds the group tree, root ("") first, from the paths
// with their secrets masked, so that an id is no digest of a secret.
func (h *handler) groupResources(paths []string) []resource {
	masked := make([]string, 0, len(paths))
	for _, p := range paths {
		masked = append(masked, h.hide.Redact(p))
	}
	paths = masked
	all := append([]string{""}, paths...)
	children := map[string][]map[string]string{}
	parentOf := map[string]string{}
	for _, p := range paths {
		parent := p[:strings.LastIndex(p, "::")]
		parentOf[p] = parent
		children[parent] = append(children[parent], ref(p))
	}
	out := make([]resource, 0, len(all))
	for _, p := range all {
		var name string
		var parent any
		if p != "" {
			name = p[strings.LastIndex(p, "::")+2:]
			parent = ref(parentOf[p])
		}
		kids := children[p]
		if kids == nil {
			kids = []map[string]string{}
		}
		out = append(out, resource{Type: "groups", ID: groupID(p),
			Attributes: groupAttributes{Path: p, Name: name},
			Relationships: map[string]any{
				"groups": map[string]any{"data": kids},
				"parent": map[string]any{"data": parent},
			}})
	}
	return out
}

func (h *handler) getGroups(w http.ResponseWriter, _ *http.Request) {
	h.writeData(w, h.groupResources(h.c.Groups()))
}

func (h *handler) getGroup(w http.ResponseWriter, r *http.Request) {
	for _, g := range h.groupResources(h.c.Groups()) {
		if g.ID == r.PathValue("id") {
			h.writeData(w, g)
			return
		}
	}
	h.writeError(w, http.StatusNotFound, "Not Found", "No group with that ID was found")
}

func setupResource(data json.RawMessage) resource {
	attrs := map[string]any{}
	if len(data) > 0 {
		attrs["data"] = data
	}
	return resource{Type: "setupData", ID: "default", Attributes: attrs}
}

func (h *handler) getSetup(w http.ResponseWriter, _ *http.Request) {
	h.writeData(w, setupResource(h.c.SetupData()))
}

func (h *handler) putSetup(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err == nil && len(raw) > 0 && !json.Valid(raw) {
		err = errors.New("the body is not JSON")
	}
	if err != nil {
		h.writeError(w, http.StatusBadRequest, "Bad Request", err.Error())
		return
	}
	if len(raw) == 0 {
		raw = nil
	}
	h.c.SetSetupData(raw)
	h.writeData(w, setupResource(h.c.SetupData()))
}

func (h *handler) postSetup(w http.ResponseWriter, r *http.Request) {
	data, err := h.c.RunSetup(r.Context())
	if err != nil {
		h.writeError(w, http.StatusInternalServerError, "Setup failed", fmt.Sprint(err))
		return
	}
	h.writeData(w, setupResource(data))
}

func (h *handler) postTeardown(w http.ResponseWriter, r *http.Request) {
	if err := h.c.RunTeardown(r.Context()); err != nil {
		h.writeError(w, http.StatusInternalServerError, "Teardown failed", fmt.Sprint(err))
		return
	}
	h.writeData(w, setupResource(h.c.SetupData()))
}
