// Package influxtest starts a real InfluxDB 1.x server for tests and
// queries it with InfluxQL through the HTTP API.
//
// The server is the binary of Debian's influxdb package (1.6). A test that
// needs it is skipped when the binary is missing on a developer's machine,
// and fails when it is missing in CI (CI=true), so that CI can never pass
// without having run it.
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
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// DefaultBinary is where Debian's influxdb package installs the server.
const DefaultBinary = "/usr/bin/influxd"

// BinaryEnv names the environment variable that overrides the binary.
const BinaryEnv = "METRONOME_INFLUXD"

// Timeouts of the server's lifecycle, with a margin for a loaded 2-core
// machine.
const (
	readyTimeout = 60 * time.Second
	stopTimeout  = 10 * time.Second
)

// Server is a running InfluxDB.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:<port>.
	URL string

	cmd    *exec.Cmd
	log    *syncBuffer
	client *http.Client
	done   chan struct{}
}

// Binary returns the path of influxd, or "" when there is none:
// $METRONOME_INFLUXD, else /usr/bin/influxd, else influxd on the PATH.
func Binary() string {
	if p := os.Getenv(BinaryEnv); p != "" {
		return p
	}
	if _, err := os.Stat(DefaultBinary); err == nil {
		return DefaultBinary
	}
	if p, err := exec.LookPath("influxd"); err == nil {
		return p
	}
	return ""
}

// Start starts an InfluxDB on free loopback ports with empty storage,
// waits until it answers and stops it when the test ends. It skips the
// test when the binary is missing, unless CI is "true".
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		msg := "influxtest: no InfluxDB binary (" + DefaultBinary + "); install it with `apt-get install -y influxdb` or set " + BinaryEnv
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; CI must run the InfluxDB tests")
		}
		t.Skip(msg)
	}
	var lastErr error
	// A port found free can be taken before influxd binds it.
	for range 3 {
		s, err := start(t, bin)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("influxtest: %v", lastErr)
	return nil
}

// config is an influxd configuration that keeps everything in dir, listens
// on loopback only and sends nothing anywhere (no usage reporting).
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

func start(t testing.TB, bin string) (*Server, error) {
	dir := t.TempDir()
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	rpcPort, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort))
	cfg := filepath.Join(dir, "influxdb.conf")
	text := fmt.Sprintf(config, net.JoinHostPort("127.0.0.1", strconv.Itoa(rpcPort)),
		filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), addr)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-config", cfg)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &Server{
		URL:    "http://" + addr,
		cmd:    cmd,
		log:    log,
		client: &http.Client{Timeout: 30 * time.Second},
		done:   make(chan struct{}),
	}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(); err != nil {
		s.stop()
		return nil, err
	}
	t.Cleanup(s.stop)
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("influxd exited before it was ready: %s", s.log.String())
		default:
		}
		resp, err := s.client.Get(s.URL + "/ping")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("influxd not ready after %s: %s", readyTimeout, s.log.String())
}

func (s *Server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Log returns what the server has printed so far.
func (s *Server) Log() string { return s.log.String() }

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

// syncBuffer collects the server's output for error messages.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Keep the last 64 KiB: the error that stopped the server matters
	// more than the start of the output.
	if b.b.Len() > 64<<10 {
		rest := b.b.Bytes()[b.b.Len()-32<<10:]
		b.b = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(b.b.String())
}
