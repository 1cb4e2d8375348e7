// Package influxtest starts a real InfluxDB 1.x server for tests and
// queries it with InfluxQL through the HTTP API.
//
// The server is the binary of Debian's influxdb package (1.6), run by
// serverproc: a test that needs it is skipped when the binary is missing
// on a developer's machine, and fails when it is missing in CI.
package influxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/serverproc"
)

// config is an influxd configuration that keeps everything in one
// directory, listens on loopback only and sends nothing anywhere (no usage
// reporting).
const config = `reporting-disabled = true
bind-address = %q
[meta]
  dir = %q
  logging-enabled = false
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
[http]
  bind-address = %q
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
[subscriber]
  enabled = false
`

// spec is Debian's influxdb package (1.6).
var spec = serverproc.Spec{
	Name:    "influxd",
	Env:     "METRONOME_INFLUXD",
	Default: "/usr/bin/influxd",
	Install: "apt-get install -y influxdb",
	Args: func(dir, addr string) ([]string, error) {
		// The meta service wants a port of its own, never used here.
		rpcPort, err := serverproc.FreePort()
		if err != nil {
			return nil, err
		}
		cfg := filepath.Join(dir, "influxdb.conf")
		text := fmt.Sprintf(config, net.JoinHostPort("127.0.0.1", strconv.Itoa(rpcPort)),
			filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), addr)
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			return nil, err
		}
		return []string{"-config", cfg}, nil
	},
	Ready:       "/ping",
	ReadyStatus: http.StatusNoContent,
}

// Server is a running InfluxDB.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:<port>.
	URL string

	proc   *serverproc.Proc
	client *http.Client
}

// Start starts an InfluxDB on free loopback ports with empty storage,
// waits until it answers and stops it when the test ends. It skips the
// test when the binary is missing, unless CI is "true".
func Start(t testing.TB) *Server {
	t.Helper()
	p := serverproc.Start(t, spec)
	return &Server{URL: p.URL, proc: p, client: &http.Client{Timeout: 30 * time.Second}}
}

// Log returns what the server has printed so far.
func (s *Server) Log() string { return s.proc.Log() }

// Series is one series of a query result.
type Series struct {
	Name    string            `json:"name"`
	Tags    map[string]string `json:"tags"`
	Columns []string          `json:"columns"`
	Values  [][]any           `json:"values"`
}

// Query runs one InfluxQL statement against db (empty for none) and
// returns the series of its result. Numbers come back as json.Number.
func (s *Server) Query(ctx context.Context, db, q string) ([]Series, error) {
	v := url.Values{"q": {q}, "epoch": {"ns"}}
	if db != "" {
		v.Set("db", db)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/query", strings.NewReader(v.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var out struct {
		Results []struct {
			Series []Series `json:"series"`
			Error  string   `json:"error"`
		} `json:"results"`
		Error string `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d: %s", q, resp.StatusCode, bytes.TrimSpace(raw))
	}
	if out.Error != "" {
		return nil, fmt.Errorf("%s: %s", q, out.Error)
	}
	var series []Series
	for _, r := range out.Results {
		if r.Error != "" {
			return nil, fmt.Errorf("%s: %s", q, r.Error)
		}
		series = append(series, r.Series...)
	}
	return series, nil
}

// Shape is what a database holds, without values or times: per
// measurement, its tag keys and its field keys with their types, as
// "name:type". Two writers whose points have the same shape serve the same
// dashboards.
type Shape map[string]Measurement

// Measurement is the tag and field keys of one measurement, sorted.
type Measurement struct {
	Tags   []string `json:"tags"`
	Fields []string `json:"fields"`
}

// Shape reads the shape of db with SHOW TAG KEYS and SHOW FIELD KEYS.
func (s *Server) Shape(ctx context.Context, db string) (Shape, error) {
	out := Shape{}
	tags, err := s.Query(ctx, db, "SHOW TAG KEYS")
	if err != nil {
		return nil, err
	}
	for _, sr := range tags {
		m := out[sr.Name]
		for _, v := range sr.Values {
			m.Tags = append(m.Tags, fmt.Sprint(v[0]))
		}
		out[sr.Name] = m
	}
	fields, err := s.Query(ctx, db, "SHOW FIELD KEYS")
	if err != nil {
		return nil, err
	}
	for _, sr := range fields {
		m := out[sr.Name]
		for _, v := range sr.Values {
			m.Fields = append(m.Fields, fmt.Sprintf("%v:%v", v[0], v[1]))
		}
		out[sr.Name] = m
	}
	for k, m := range out {
		sort.Strings(m.Tags)
		sort.Strings(m.Fields)
		out[k] = m
	}
	return out, nil
}
