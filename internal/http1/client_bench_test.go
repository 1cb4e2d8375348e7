//go:build unix

package http1

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// benchServerEnv makes the test binary a loopback server for
// BenchmarkClient instead of running tests: it prints its address and
// serves until its standard input closes.
const benchServerEnv = "METRONOME_HTTP1_BENCH_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) != "" {
		if err := serveBench(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// serveBench is the child process's server: net/http, answering "ok".
func serveBench() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// BenchmarkClient measures what the engine saves against net/http's
// Transport, which k6 uses: the same GET, with a few headers, to the same
// loopback server, one connection kept alive, each answer read to its end.
// The server runs in a child process, so that allocs/op and cpu-ns/op (the
// process's user and system CPU time per request) are the client's alone.
// `make bench` runs it (cmd/bench, the client measure).
func BenchmarkClient(b *testing.B) {
	addr := startBenchServer(b)
	b.Run("http1", func(b *testing.B) {
		tr := New(Config{})
		defer tr.CloseIdleConnections()
		benchClient(b, tr, addr)
	})
	b.Run("net-http", func(b *testing.B) {
		tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 100}
		defer tr.CloseIdleConnections()
		benchClient(b, tr, addr)
	})
}

func benchClient(b *testing.B, rt http.RoundTripper, addr string) {
	req := benchRequest(b, "http://"+addr+"/a/b?x=1")
	// The first request dials: the loop measures a kept connection.
	clientRoundTrip(b, rt, req)
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		clientRoundTrip(b, rt, req)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

func clientRoundTrip(b *testing.B, rt http.RoundTripper, req *http.Request) {
	resp, err := rt.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		b.Fatal(err)
	}
	_ = resp.Body.Close()
}

// startBenchServer starts this test binary as serveBench's server and
// returns its address; the server ends with the benchmark.
func startBenchServer(b *testing.B) string {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), benchServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("the server process did not say its address: %v", err)
	}
	return addr[:len(addr)-1]
}

// cpuTime is the user plus system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIdleCheck measures quiet on a kept loopback connection: the
// non-blocking peek at its socket that every reuse of a connection costs,
// so that bytes or a close that came while it was idle are never taken for
// the next request's answer.
func BenchmarkIdleCheck(b *testing.B) {
	addr := startBenchServer(b)
	tr := New(Config{})
	defer tr.CloseIdleConnections()
	req := benchRequest(b, "http://"+addr+"/")
	clientRoundTrip(b, tr, req)
	c, err := tr.get(context.Background(), req.URL, false)
	if err != nil {
		b.Fatal(err)
	}
	defer c.conn.Close()
	b.ReportAllocs()
	for b.Loop() {
		if !c.quiet(false) {
			b.Fatal("a live idle connection was found done")
		}
	}
}
