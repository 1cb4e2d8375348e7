// Package serverproc runs a real server binary for a test: on a free
// loopback port, in a temporary directory, until it answers, and stopped
// when the test ends. promtest (Prometheus) and influxtest (InfluxDB) are
// built on it.
//
// A test whose binary is missing is skipped on a developer's machine and
// fails in CI (CI=true), so that CI can never pass without having run it.
package serverproc

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Timeouts of a server's lifecycle, with a margin for a loaded 2-core
// machine.
const (
	readyTimeout = 60 * time.Second
	stopTimeout  = 10 * time.Second
)

// Spec describes a server binary.
type Spec struct {
	// Name names the server in messages ("prometheus").
	Name string
	// Env names the variable that overrides the binary's path; Default is
	// where its Debian package installs it; Install is how to get it.
	Env, Default, Install string
	// Args returns the command line of a server that keeps its files in
	// dir and listens for HTTP on addr (127.0.0.1:port).
	Args func(dir, addr string) ([]string, error)
	// Ready is the path that answers ReadyStatus once the server is ready.
	Ready       string
	ReadyStatus int
}

// Binary returns the server's path, or "" when there is none: $Env, else
// Default, else Name on the PATH.
func (s Spec) Binary() string {
	if p := os.Getenv(s.Env); p != "" {
		return p
	}
	if _, err := os.Stat(s.Default); err == nil {
		return s.Default
	}
	if p, err := exec.LookPath(s.Name); err == nil {
		return p
	}
	return ""
}

// Proc is a running server.
type Proc struct {
	// URL is the server's base URL, http://127.0.0.1:<port>.
	URL string

	cmd  *exec.Cmd
	log  *logBuffer
	done chan struct{}
}

// Start starts the server and waits until it is ready. It skips the test
// when the binary is missing, unless CI is "true".
func Start(t testing.TB, s Spec) *Proc {
	t.Helper()
	bin := s.Binary()
	if bin == "" {
		msg := fmt.Sprintf("no %s binary (%s); install it with `%s` or set %s", s.Name, s.Default, s.Install, s.Env)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; CI must run these tests")
		}
		t.Skip(msg)
	}
	var lastErr error
	// A port found free can be taken before the server binds it; try a
	// few before giving up.
	for range 3 {
		p, err := start(t, s, bin)
		if err == nil {
			return p
		}
		lastErr = err
	}
	t.Fatalf("%s: %v", s.Name, lastErr)
	return nil
}

func start(t testing.TB, s Spec, bin string) (*Proc, error) {
	dir := t.TempDir()
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args, err := s.Args(dir, addr)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	log := &logBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	p := &Proc{URL: "http://" + addr, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	if err := p.waitReady(s); err != nil {
		p.stop()
		return nil, err
	}
	t.Cleanup(p.stop)
	return p, nil
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (p *Proc) waitReady(s Spec) error {
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready: %s", s.Name, p.log.String())
		default:
		}
		resp, err := client.Get(p.URL + s.Ready)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == s.ReadyStatus {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s: %s", s.Name, readyTimeout, p.log.String())
}

func (p *Proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Log returns what the server has printed lately.
func (p *Proc) Log() string { return p.log.String() }

// logBuffer collects the server's output for error messages.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
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

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(b.b.String())
}
