// Package promtest starts a real Prometheus server for tests, with the
// remote-write receiver and native histograms enabled, and queries it
// through the HTTP API.
//
// The server is the binary of Debian's prometheus package (2.42), run by
// serverproc: a test that needs it is skipped when the binary is missing
// on a developer's machine, and fails when it is missing in CI.
package promtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/serverproc"
)

// spec is Debian's prometheus package (2.42), with the remote-write
// receiver and native histograms on, an empty TSDB and no scrape jobs.
var spec = serverproc.Spec{
	Name:    "prometheus",
	Env:     "METRONOME_PROMETHEUS",
	Default: "/usr/bin/prometheus",
	Install: "apt-get install -y prometheus",
	Args: func(dir, addr string) ([]string, error) {
		cfg := filepath.Join(dir, "prometheus.yml")
		if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\n"), 0o644); err != nil {
			return nil, err
		}
		return []string{
			"--config.file=" + cfg,
			"--storage.tsdb.path=" + filepath.Join(dir, "data"),
			"--web.listen-address=" + addr,
			"--web.enable-remote-write-receiver",
			"--enable-feature=native-histograms",
			"--log.level=warn",
		}, nil
	},
	Ready:       "/-/ready",
	ReadyStatus: http.StatusOK,
}

// Server is a running Prometheus.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:<port>.
	URL string

	proc   *serverproc.Proc
	client *http.Client
}

// Start starts a Prometheus on a free loopback port, waits until it is
// ready and stops it when the test ends. It skips the test when the binary
// is missing, unless CI is "true".
func Start(t testing.TB) *Server {
	t.Helper()
	p := serverproc.Start(t, spec)
	return &Server{URL: p.URL, proc: p, client: &http.Client{Timeout: 30 * time.Second}}
}

// WriteURL is the remote-write endpoint.
func (s *Server) WriteURL() string { return s.URL + "/api/v1/write" }

// Log returns what the server has printed so far (warnings and errors).
func (s *Server) Log() string { return s.proc.Log() }

// Result is the answer to a query.
type Result struct {
	// Type is "vector", "matrix", "scalar" or "string".
	Type   string
	Series []Series
}

// Series is one labelled series of a result. A vector's series has one
// point; a scalar is one series without labels.
type Series struct {
	Labels map[string]string
	Points []Point
}

// Point is one value of a series: a float, or a native histogram when H is
// not nil.
type Point struct {
	T time.Time
	V float64
	H *Histogram
}

// Histogram is a native histogram value as the HTTP API returns it.
type Histogram struct {
	Count, Sum float64
	Buckets    []Bucket
}

// Bucket is one bucket of a Histogram. Boundaries is the API's rule code:
// 0 open left, 1 open right, 2 open both, 3 closed both.
type Bucket struct {
	Boundaries   int
	Lower, Upper float64
	Count        float64
}

// Empty reports whether the result holds no value.
func (r Result) Empty() bool {
	for _, s := range r.Series {
		if len(s.Points) > 0 {
			return false
		}
	}
	return true
}

// Query runs an instant PromQL query evaluated at at.
func (s *Server) Query(ctx context.Context, expr string, at time.Time) (Result, error) {
	v := url.Values{"query": {expr}, "time": {formatTime(at)}}
	return s.get(ctx, "/api/v1/query", v)
}

// QueryRange runs a range PromQL query.
func (s *Server) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (Result, error) {
	v := url.Values{
		"query": {expr},
		"start": {formatTime(start)},
		"end":   {formatTime(end)},
		"step":  {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	}
	return s.get(ctx, "/api/v1/query_range", v)
}

// Series lists the label sets of the series matching a selector between
// start and end.
func (s *Server) Series(ctx context.Context, match string, start, end time.Time) ([]map[string]string, error) {
	v := url.Values{"match[]": {match}, "start": {formatTime(start)}, "end": {formatTime(end)}}
	body, err := s.call(ctx, http.MethodPost, "/api/v1/series", v)
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decoding series: %w", err)
	}
	return out, nil
}

// LabelValues lists the values of a label between start and end, over
// the series matching match, or over every series when match is "".
func (s *Server) LabelValues(ctx context.Context, label, match string, start, end time.Time) ([]string, error) {
	v := url.Values{"start": {formatTime(start)}, "end": {formatTime(end)}}
	if match != "" {
		v.Set("match[]", match)
	}
	// The label-values endpoint answers GET only.
	body, err := s.call(ctx, http.MethodGet, "/api/v1/label/"+url.PathEscape(label)+"/values", v)
	if err != nil {
		return nil, err
	}
	var out []string
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decoding label values: %w", err)
	}
	return out, nil
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}

// call sends the parameters v to an API endpoint, in the body of a POST or
// in the URL of a GET, and returns the answer's data.
func (s *Server) call(ctx context.Context, method, path string, v url.Values) (json.RawMessage, error) {
	var req *http.Request
	var err error
	if method == http.MethodGet {
		req, err = http.NewRequestWithContext(ctx, method, s.URL+path+"?"+v.Encode(), nil)
	} else {
		req, err = http.NewRequestWithContext(ctx, method, s.URL+path, strings.NewReader(v.Encode()))
		if req != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d: %s", path, resp.StatusCode, bytes.TrimSpace(raw))
	}
	if env.Status != "success" {
		return nil, fmt.Errorf("%s: %s: %s", path, env.ErrorType, env.Error)
	}
	return env.Data, nil
}

func (s *Server) get(ctx context.Context, path string, v url.Values) (Result, error) {
	data, err := s.call(ctx, http.MethodPost, path, v)
	if err != nil {
		return Result{}, fmt.Errorf("query %q: %w", v.Get("query"), err)
	}
	r, err := decodeResult(data)
	if err != nil {
		return Result{}, fmt.Errorf("query %q: %w", v.Get("query"), err)
	}
	return r, nil
}

type rawSeries struct {
	Metric     map[string]string `json:"metric"`
	Value      json.RawMessage   `json:"value"`
	Values     []json.RawMessage `json:"values"`
	Histogram  json.RawMessage   `json:"histogram"`
	Histograms []json.RawMessage `json:"histograms"`
}

func decodeResult(data json.RawMessage) (Result, error) {
	var d struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return Result{}, err
	}
	r := Result{Type: d.ResultType}
	switch d.ResultType {
	case "scalar", "string":
		p, err := decodePoint(d.Result, false)
		if err != nil {
			return Result{}, err
		}
		r.Series = []Series{{Points: []Point{p}}}
		return r, nil
	case "vector", "matrix":
	default:
		return Result{}, fmt.Errorf("unknown result type %q", d.ResultType)
	}
	var raws []rawSeries
	if err := json.Unmarshal(d.Result, &raws); err != nil {
		return Result{}, err
	}
	for _, rs := range raws {
		s := Series{Labels: rs.Metric}
		add := func(raw json.RawMessage, hist bool) error {
			if len(raw) == 0 {
				return nil
			}
			p, err := decodePoint(raw, hist)
			if err != nil {
				return err
			}
			s.Points = append(s.Points, p)
			return nil
		}
		if err := add(rs.Value, false); err != nil {
			return Result{}, err
		}
		if err := add(rs.Histogram, true); err != nil {
			return Result{}, err
		}
		for _, v := range rs.Values {
			if err := add(v, false); err != nil {
				return Result{}, err
			}
		}
		for _, v := range rs.Histograms {
			if err := add(v, true); err != nil {
				return Result{}, err
			}
		}
		r.Series = append(r.Series, s)
	}
	return r, nil
}

// decodePoint reads [ts, "value"] or [ts, {histogram}].
func decodePoint(raw json.RawMessage, hist bool) (Point, error) {
	var pair []json.RawMessage
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return Point{}, fmt.Errorf("malformed sample %s", raw)
	}
	var ts float64
	if err := json.Unmarshal(pair[0], &ts); err != nil {
		return Point{}, fmt.Errorf("malformed timestamp %s", pair[0])
	}
	sec, frac := math.Modf(ts)
	p := Point{T: time.Unix(int64(sec), int64(math.Round(frac*1e3))*int64(time.Millisecond))}
	if !hist {
		var s string
		if err := json.Unmarshal(pair[1], &s); err != nil {
			return Point{}, fmt.Errorf("malformed value %s", pair[1])
		}
		v, err := parseFloat(s)
		if err != nil {
			return Point{}, err
		}
		p.V = v
		return p, nil
	}
	var h struct {
		Count   string              `json:"count"`
		Sum     string              `json:"sum"`
		Buckets [][]json.RawMessage `json:"buckets"`
	}
	if err := json.Unmarshal(pair[1], &h); err != nil {
		return Point{}, fmt.Errorf("malformed histogram %s", pair[1])
	}
	out := &Histogram{}
	var err error
	if out.Count, err = parseFloat(h.Count); err != nil {
		return Point{}, err
	}
	if out.Sum, err = parseFloat(h.Sum); err != nil {
		return Point{}, err
	}
	for _, b := range h.Buckets {
		if len(b) != 4 {
			return Point{}, fmt.Errorf("malformed histogram bucket in %s", pair[1])
		}
		var bk Bucket
		var lo, hi, c string
		if err := errors.Join(json.Unmarshal(b[0], &bk.Boundaries), json.Unmarshal(b[1], &lo),
			json.Unmarshal(b[2], &hi), json.Unmarshal(b[3], &c)); err != nil {
			return Point{}, fmt.Errorf("malformed histogram bucket in %s", pair[1])
		}
		if bk.Lower, err = parseFloat(lo); err != nil {
			return Point{}, err
		}
		if bk.Upper, err = parseFloat(hi); err != nil {
			return Point{}, err
		}
		if bk.Count, err = parseFloat(c); err != nil {
			return Point{}, err
		}
		out.Buckets = append(out.Buckets, bk)
	}
	p.H = out
	return p, nil
}

// parseFloat reads a Prometheus API number, which may be NaN or ±Inf.
func parseFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed number %q", s)
	}
	return v, nil
}
