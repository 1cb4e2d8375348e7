package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/metronome-load/metronome/internal/testkit/grpctest"
)

// The scripts of the dns and localIPs options need names with several
// addresses and local addresses other than 127.0.0.1. The named server
// listens on one port of 127.0.0.2 to 127.0.0.9 and ::1 (Linux routes all
// of 127/8 to the loopback interface), and tells each request which of
// its addresses it reached and from which address: as JSON at /, in the
// X-Local and X-Peer headers of a WebSocket handshake at /ws and of a
// gRPC call to the Greeter. Scripts with a "// compat:etc-hosts" line run
// in a mount namespace whose /etc/hosts gives the names below those
// addresses and whose /etc/resolv.conf names only 127.0.0.1, so that no
// lookup leaves the machine; both k6 and metronome take names from
// /etc/hosts through Go's resolver, in the same order.
//
//	MULTI     http://multi.test:PORT   127.0.0.2, 127.0.0.3, ::1, 127.0.0.4
//	V4        http://four.test:PORT    127.0.0.5
//	V6        http://six.test:PORT     ::1
//	NAMED_IP  http://127.0.0.2:PORT    (no name: the localIPs scripts)
const namedHosts = `127.0.0.1 localhost
127.0.0.2 multi.test
127.0.0.3 multi.test
::1 multi.test
127.0.0.4 multi.test
::1 six.test
127.0.0.5 four.test
`

var namedAddrs = []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7", "127.0.0.8", "127.0.0.9", "::1"}

// named says whether the named server runs, and, when scripts can run
// under the private /etc/hosts, how: the command that runs a program with
// it; otherwise why they cannot.
var named struct {
	once    sync.Once
	eps     []endpoint
	why     string   // why the named server does not run
	wrap    []string // prefix of the command under the private /etc/hosts
	whyNoNS string
}

// startNamed starts the named server once for the process (it lives as
// long as the test binary, like the Greeter) and returns its endpoints,
// none when this machine cannot listen on those addresses; it writes the
// private /etc files into t's folder.
func startNamed(t *testing.T) []endpoint {
	named.once.Do(func() {
		port, ls, err := listenAll(namedAddrs)
		if err != nil {
			named.why = err.Error()
			return
		}
		greeter, err := grpctest.Start(func(func()) {})
		if err != nil {
			named.why = "gRPC server: " + err.Error()
			return
		}
		srv := &http.Server{Handler: namedHandler(greeter), ReadHeaderTimeout: 10 * time.Second}
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
		for _, l := range ls {
			go srv.Serve(l) //nolint:errcheck // ends with the process
		}
		named.eps = []endpoint{
			{name: "MULTI", url: "http://multi.test:" + port},
			{name: "V4", url: "http://four.test:" + port},
			{name: "V6", url: "http://six.test:" + port},
			{name: "NAMED_IP", url: "http://127.0.0.2:" + port},
		}
	})
	if named.eps != nil {
		named.wrap, named.whyNoNS = privateHosts(t.TempDir())
	}
	return named.eps
}

// listenAll listens on one port of every address.
func listenAll(addrs []string) (string, []net.Listener, error) {
	var last error
	for range 20 {
		var ls []net.Listener
		port := "0"
		for _, a := range addrs {
			l, err := net.Listen("tcp", net.JoinHostPort(a, port))
			if err != nil {
				last = err
				break
			}
			ls = append(ls, l)
			_, port, _ = net.SplitHostPort(l.Addr().String())
		}
		if len(ls) == len(addrs) {
			return port, ls, nil
		}
		for _, l := range ls {
			_ = l.Close()
		}
	}
	return "", nil, fmt.Errorf("cannot listen on one port of %v: %v", addrs, last)
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

func namedHandler(greeter *grpctest.Server) http.Handler {
	up := websocket.Upgrader{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local := hostOf(r.Context().Value(http.LocalAddrContextKey).(net.Addr).String())
		peer := hostOf(r.RemoteAddr)
		switch {
		case r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc"):
			w.Header().Set("X-Local", local)
			w.Header().Set("X-Peer", peer)
			greeter.ServeHTTP(w, r)
		case r.URL.Path == "/ws":
			c, err := up.Upgrade(w, r, http.Header{"X-Local": {local}, "X-Peer": {peer}})
			if err != nil {
				return
			}
			defer c.Close()
			for {
				kind, msg, err := c.ReadMessage()
				if err != nil || c.WriteMessage(kind, msg) != nil {
					return
				}
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"local": local, "peer": peer})
		}
	})
}

// privateHosts writes the hosts and resolv.conf files into dir and finds
// how to run a program with them bind-mounted over /etc's: unshare -m as
// root, else in a user namespace (unshare -rm). It returns the command
// prefix, or why there is none.
func privateHosts(dir string) ([]string, string) {
	hosts, resolv := filepath.Join(dir, "hosts"), filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(hosts, []byte(namedHosts), 0o644); err != nil {
		return nil, err.Error()
	}
	if err := os.WriteFile(resolv, []byte("nameserver 127.0.0.1\n"), 0o644); err != nil {
		return nil, err.Error()
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return nil, "no unshare command"
	}
	const mount = `mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf && shift 2 && exec "$@"`
	var why []string
	for _, flags := range []string{"-m", "-rm"} {
		wrap := []string{"unshare", flags, "sh", "-c", mount, "sh", hosts, resolv}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := exec.CommandContext(ctx, wrap[0], append(wrap[1:], "cat", "/etc/hosts")...).CombinedOutput()
		cancel()
		if err == nil && string(out) == namedHosts {
			return wrap, ""
		}
		why = append(why, fmt.Sprintf("unshare %s: %v %s", flags, err, strings.TrimSpace(string(out))))
	}
	return nil, "cannot bind-mount a private /etc/hosts (" + strings.Join(why, "; ") + ")"
}

// namedCommand returns the command that runs bin with args for script s:
// under the private /etc/hosts when s asks for it. It skips t when s
// needs what this machine cannot give.
func namedCommand(ctx context.Context, t *testing.T, s script, bin string, args []string) *exec.Cmd {
	t.Helper()
	if s.named || s.etcHosts {
		if named.eps == nil {
			t.Skipf("%s needs the named server: %s", s.name, named.why)
		}
	}
	if !s.etcHosts {
		return exec.CommandContext(ctx, bin, args...)
	}
	if named.wrap == nil {
		t.Skipf("%s needs a private /etc/hosts: %s", s.name, named.whyNoNS)
	}
	full := append(append(append([]string{}, named.wrap[1:]...), bin), args...)
	return exec.CommandContext(ctx, named.wrap[0], full...)
}
