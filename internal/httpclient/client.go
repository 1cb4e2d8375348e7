package httpclient

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/metronome-load/metronome/internal/dialer"
	"github.com/metronome-load/metronome/internal/http1"
)

// Options are what a VU's client takes from the test's options.
type Options struct {
	// MaxIdlePerHost is how many idle connections are kept per host;
	// below 100 it is 100.
	MaxIdlePerHost int
	// NoConnectionReuse closes every connection after its request.
	NoConnectionReuse bool
	// TLS holds the TLS settings of the test's options
	// (config.Options.TLSConfig: verification, versions, cipher suites,
	// client certificates); nil is Go's defaults. The client keeps a copy.
	TLS *tls.Config
	// BlacklistIPs, BlockHostnames and Hosts are the network fence and
	// the host overrides, as the options of the same names.
	BlacklistIPs, BlockHostnames []string
	Hosts                        map[string]string
	// Network is the run's resolver and local addresses (the dns and
	// localIPs options), VU the number of the VU whose client this is,
	// which picks its local address; a nil Network is k6's defaults.
	Network *dialer.Network
	VU      uint64
}

// NewClient returns the HTTP client of one VU. It has its own connection
// pool, so connections are reused across the iterations of that VU only,
// it never follows redirects itself (Do follows them so that every hop is
// measured), and it counts the bytes its connections carry for data_sent
// and data_received.
func NewClient(o Options) *http.Client {
	return &http.Client{
		Transport: newTransport(o),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// transport is the RoundTripper of a VU's client: a plain http.Transport
// whose connections count the bytes they read and write.
type transport struct {
	*http.Transport
	// dialer opens connections under the options' network fence.
	dialer  *dialer.Dialer
	tlsConf *tls.Config

	// fast runs plain-HTTP/1.1 requests in place; nil when a proxy is
	// configured or keep-alive is off.
	fast *http1.Transport

	// sent and received count bytes on the wire since they were last taken
	// by take; every connection of the VU adds to them.
	sent, received atomic.Int64
}

// RoundTrip runs req on the fast path when it can, else on http.Transport.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.fast != nil && t.fast.Handles(req) {
		return t.fast.RoundTrip(req)
	}
	return t.Transport.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of both paths.
func (t *transport) CloseIdleConnections() {
	if t.fast != nil {
		t.fast.CloseIdleConnections()
	}
	t.Transport.CloseIdleConnections()
}

func newTransport(o Options) *transport {
	idle := max(o.MaxIdlePerHost, 100)
	tlsConf := &tls.Config{}
	if o.TLS != nil {
		tlsConf = o.TLS.Clone()
	}
	tlsConf.NextProtos = []string{"h2", "http/1.1"}
	t := &transport{
		dialer:  dialer.New(net.Dialer{KeepAlive: 30 * time.Second}, o.BlacklistIPs, o.BlockHostnames, o.Hosts).WithNetwork(o.Network, o.VU),
		tlsConf: tlsConf,
	}
	t.Transport = &http.Transport{
		// A proxy resolves and reaches the targets itself; what the
		// network options can still refuse is refused before it is asked.
		Proxy:                 t.dialer.Proxy(http.ProxyFromEnvironment),
		DialContext:           t.dial,
		DialTLSContext:        t.dialTLS,
		TLSClientConfig:       t.tlsConf, // for HTTPS through a proxy
		ForceAttemptHTTP2:     true,
		DisableKeepAlives:     o.NoConnectionReuse,
		DisableCompression:    true,
		MaxIdleConnsPerHost:   idle,
		IdleConnTimeout:       idleTimeout,
		ExpectContinueTimeout: time.Second,
	}
	if !t.Transport.DisableKeepAlives && !proxyConfigured() {
		t.fast = http1.New(http1.Config{Dial: t.dial, MaxIdlePerHost: idle, IdleTimeout: idleTimeout})
	}
	return t
}

// idleTimeout is how long an unused connection is kept.
const idleTimeout = 90 * time.Second

// proxyConfigured reports whether the environment asks for an HTTP proxy,
// which only http.Transport implements.
func proxyConfigured() bool {
	for _, k := range []string{"HTTP_PROXY", "http_proxy"} {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}

// take returns the bytes sent and received since the previous call.
func (t *transport) take() (sent, received int64) {
	return t.sent.Swap(0), t.received.Swap(0)
}

func (t *transport) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	start := sinceEpoch()
	c, err := t.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, t: t, dialStart: start, dialEnd: sinceEpoch()}, nil
}

// dialTLS dials and runs the TLS handshake itself, so that the handshake's
// duration is known per connection rather than per request.
func (t *transport) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := t.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	cc := c.(*countingConn)
	cfg := t.tlsConf.Clone()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		cfg.ServerName = host
	} else {
		cfg.ServerName = addr
	}
	tc := tls.Client(cc, cfg)
	cc.tlsStart = sinceEpoch()
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	cc.tlsEnd = sinceEpoch()
	return tc, nil
}

// countingConn is a connection of a VU's transport. It adds every byte it
// reads or writes to the transport's counters and remembers how long its
// dial and TLS handshake took. Those times are written before the
// connection is handed to the transport and never change afterwards.
type countingConn struct {
	net.Conn
	t                  *transport
	dialStart, dialEnd time.Duration
	tlsStart, tlsEnd   time.Duration
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.t.received.Add(int64(n))
	}
	return n, err
}

// NetConn returns the connection under c, so that http1 can check an idle
// one's socket.
func (c *countingConn) NetConn() net.Conn { return c.Conn }

// SyscallConn returns the socket under c, on which http1 waits for an
// answer before it reads (the answer's bytes still pass through Read).
func (c *countingConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.t.sent.Add(int64(n))
	}
	return n, err
}

// connOf returns the countingConn under a connection the transport handed
// out, or nil when it is not one of ours.
func connOf(c net.Conn) *countingConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	cc, _ := c.(*countingConn)
	return cc
}

// epoch is the origin of the monotonic timestamps used for timings.
var epoch = time.Now()

func sinceEpoch() time.Duration { return time.Since(epoch) }
