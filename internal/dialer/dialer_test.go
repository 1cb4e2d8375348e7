package dialer

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// noDNS is a resolver that answers from /etc/hosts and fails every DNS
// query, so that no test lookup leaves the machine.
var noDNS = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("no DNS in tests")
}}

// listen starts a loopback listener that accepts and closes connections,
// and returns its port.
func listen(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// dialed returns where d connects for addr ("" and the error when it
// does not).
func dialed(d *Dialer, addr string) (string, error) {
	c, err := d.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.RemoteAddr().String(), nil
}

// TestRulesAsK6 checks each option against what k6 v2.2.0 did with the
// same options and URLs (a request through k6's http module per case).
func TestRulesAsK6(t *testing.T) {
	port := listen(t)
	p := strconv.Itoa(port)
	other := strconv.Itoa(listen(t))
	here := "127.0.0.1:" + p
	base := net.Dialer{Resolver: noDNS}
	cases := []struct {
		name      string
		blacklist []string
		blocked   []string
		hosts     map[string]string
		addr      string
		want      string // where it connects, or the error
	}{
		{"blacklisted address", []string{"127.0.0.0/8"}, nil, nil, here, "IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)"},
		{"blacklisted after resolving", []string{"127.0.0.0/8"}, nil, nil, "localhost:" + p, "IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)"},
		{"blacklisted after pinning", []string{"127.0.0.0/8"}, nil, map[string]string{"a.test": here}, "a.test:80", "IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)"},
		{"another range", []string{"10.0.0.0/8"}, nil, map[string]string{"a.test": here}, "a.test:" + other, here},
		{"IPv6 range", []string{"::1/128"}, nil, nil, "[::1]:" + p, "IP (::1) is in a blacklisted range (::1/128)"},
		{"pinned with a port", nil, nil, map[string]string{"a.test": here}, "a.test:80", here},
		{"pinned without a port", nil, nil, map[string]string{"b.test": "127.0.0.1"}, "b.test:" + p, here},
		{"pinned by wildcard", nil, nil, map[string]string{"*.w.test": here}, "x.w.test:80", here},
		{"a wildcard is not its own suffix", nil, nil, map[string]string{"*.w.test": here}, "w.test:80", "lookup w.test: no DNS in tests"},
		{"pinned name and port", nil, nil, map[string]string{"c.test:9999": here}, "c.test:9999", here},
		{"pinned case aside", nil, nil, map[string]string{"a.test": here}, "A.TEST:80", here},
		{"pinned address", nil, nil, map[string]string{"127.0.0.1:" + other: here}, "127.0.0.1:" + other, here},
		{"blocked by wildcard", nil, []string{"*.test", "localhost"}, nil, "a.test:80", "hostname (a.test) is in a blocked pattern (*.test)"},
		{"blocked name", nil, []string{"*.test", "localhost"}, nil, "localhost:" + p, "hostname (localhost) is in a blocked pattern (localhost)"},
		{"blocked case aside", nil, []string{"*.test", "localhost"}, nil, "LOCALHOST:" + p, "hostname (LOCALHOST) is in a blocked pattern (localhost)"},
		{"addresses are not names", nil, []string{"*"}, nil, here, here},
		{"* blocks every name", nil, []string{"*"}, nil, "localhost:" + p, "hostname (localhost) is in a blocked pattern (*)"},
		{"blocked before pinned", nil, []string{"a.test"}, map[string]string{"a.test": here}, "a.test:80", "hostname (a.test) is in a blocked pattern (a.test)"},
	}
	for _, c := range cases {
		got, err := dialed(New(base, c.blacklist, c.blocked, c.hosts), c.addr)
		if err != nil {
			got = err.Error()
		}
		// The resolver's error names the lookup; compare its cause.
		var dns *net.DNSError
		if errors.As(err, &dns) {
			got = "lookup " + dns.Name + ": " + dns.Err
		}
		if got != c.want {
			t.Errorf("%s: %s gave %q, want %q", c.name, c.addr, got, c.want)
		}
	}
}

// TestNoRulesDialsAsBase checks that without rules the Dialer is its base.
func TestNoRulesDialsAsBase(t *testing.T) {
	here := "127.0.0.1:" + strconv.Itoa(listen(t))
	if got, err := dialed(New(net.Dialer{}, nil, nil, nil), here); got != here || err != nil {
		t.Errorf("dialled %q (%v), want %q", got, err, here)
	}
}

// TestBadRulesLetNothingThrough checks that a Dialer made from rules that
// do not parse refuses every dial instead of dialling unfenced.
func TestBadRulesLetNothingThrough(t *testing.T) {
	here := "127.0.0.1:" + strconv.Itoa(listen(t))
	for _, d := range []*Dialer{
		New(net.Dialer{}, []string{"bogus"}, nil, nil),
		New(net.Dialer{}, nil, []string{"a..b"}, nil),
		New(net.Dialer{}, nil, nil, map[string]string{"a.test": "localhost"}),
	} {
		if _, err := dialed(d, here); err == nil {
			t.Errorf("a dialer with bad rules connected")
		}
	}
}

// TestChecks checks what the options accept, as k6 does, and the entries
// they refuse: k6 refuses the same bad ranges and patterns at start, and
// sends a hosts entry naming a name to this machine, which metronome
// refuses instead.
func TestChecks(t *testing.T) {
	for _, s := range []string{"10.0.0.0/8", "127.0.0.1/32", "::1/128", "fd00::/8"} {
		if _, err := ParseIPRange(s); err != nil {
			t.Errorf("range %q: %v", s, err)
		}
	}
	for _, s := range []string{"bogus", "10.0.0.1", "10.0.0.0/33", ""} {
		if _, err := ParseIPRange(s); err == nil {
			t.Errorf("range %q accepted", s)
		}
	}
	for _, s := range []string{"example.com", "*.example.com", "*example.com", "*", "a-b.c", "localhost", "A.TEST"} {
		if err := CheckHostnamePattern(s); err != nil {
			t.Errorf("pattern %q: %v", s, err)
		}
	}
	for _, s := range []string{"a..b", "a b", "-a.com", "a-.com", "a.*.com", "**", "a_b.com", "é.com"} {
		if err := CheckHostnamePattern(s); err == nil {
			t.Errorf("pattern %q accepted", s)
		}
	}
	for _, kv := range [][2]string{{"a.test", "127.0.0.1"}, {"a.test", "127.0.0.1:8080"}, {"*.a.test:443", "::1"},
		{"a.test", "[::1]:443"}, {"127.0.0.1:80", "127.0.0.2:8080"}} {
		if err := CheckHost(kv[0], kv[1]); err != nil {
			t.Errorf("hosts %q: %q: %v", kv[0], kv[1], err)
		}
	}
	for _, kv := range [][2]string{{"a b", "127.0.0.1"}, {"a.test:x", "127.0.0.1"}, {"a.test", "localhost:18201"},
		{"a.test", "nonsense value"}, {"a.test", "127.0.0.1:99999"}, {"a.test", ""}} {
		if err := CheckHost(kv[0], kv[1]); err == nil {
			t.Errorf("hosts %q: %q accepted", kv[0], kv[1])
		}
	}
}

// Through a proxy, which resolves and reaches the target itself, what the
// options can still refuse is refused before the proxy is asked: a host
// name blockHostnames blocks and a host that is a blacklisted IP address,
// with the errors of a direct connection. Requests the proxy function
// sends direct, and its errors, pass unchanged; hosts plays no part.
func TestProxyRefusesWhatTheOptionsCan(t *testing.T) {
	proxyURL, _ := url.Parse("http://127.0.0.1:3128")
	proxy := func(r *http.Request) (*url.URL, error) {
		switch r.URL.Hostname() {
		case "direct.blocked.test", "10.9.9.9":
			return nil, nil
		case "broken.test":
			return nil, errors.New("bad proxy setting")
		}
		return proxyURL, nil
	}
	d := New(net.Dialer{}, []string{"10.0.0.0/8"}, []string{"*.blocked.test"}, map[string]string{"pinned.test": "10.1.1.1"})
	p := d.Proxy(proxy)
	for _, c := range []struct {
		url   string
		proxy *url.URL
		err   string
	}{
		{"http://a.blocked.test/x", nil, "hostname (a.blocked.test) is in a blocked pattern (*.blocked.test)"},
		{"https://A.Blocked.Test:8443/x", nil, "hostname (A.Blocked.Test) is in a blocked pattern (*.blocked.test)"},
		{"http://10.1.2.3:8080/x", nil, "IP (10.1.2.3) is in a blacklisted range (10.0.0.0/8)"},
		{"ws://allowed.test/ws", proxyURL, ""},
		{"http://pinned.test/", proxyURL, ""}, // hosts cannot apply
		{"http://192.168.1.1/", proxyURL, ""},
		{"http://direct.blocked.test/", nil, ""}, // not proxied: the dialer refuses it
		{"http://10.9.9.9/", nil, ""},
		{"http://broken.test/", nil, "bad proxy setting"},
	} {
		u, _ := url.Parse(c.url)
		got, err := p(&http.Request{URL: u})
		if got != c.proxy || (err == nil) != (c.err == "") || err != nil && err.Error() != c.err {
			t.Errorf("%s: proxy %v, error %v; want %v, %q", c.url, got, err, c.proxy, c.err)
		}
	}
	var bl *BlacklistedError
	if _, err := p(&http.Request{URL: &url.URL{Scheme: "http", Host: "10.0.0.1"}}); !errors.As(err, &bl) {
		t.Errorf("a blacklisted address: %T %v", err, err)
	}
	var bh *BlockedError
	if _, err := p(&http.Request{URL: &url.URL{Scheme: "http", Host: "x.blocked.test"}}); !errors.As(err, &bh) {
		t.Errorf("a blocked name: %T %v", err, err)
	}
}

// TestResolveAddr checks that ResolveAddr answers where DialContext would
// connect, refusing what it would refuse.
func TestResolveAddr(t *testing.T) {
	d := New(net.Dialer{Resolver: noDNS}, []string{"10.0.0.0/8"}, []string{"*.blocked.test"},
		map[string]string{"pinned.test": "127.0.0.2", "api.test:443": "127.0.0.3:8443", "bad.test": "10.1.2.3"})
	for _, c := range []struct {
		addr, ip string
		port     int
		err      string
	}{
		{addr: "127.0.0.1:80", ip: "127.0.0.1", port: 80},
		{addr: "127.0.0.1", ip: "127.0.0.1"},
		{addr: "pinned.test:9000", ip: "127.0.0.2", port: 9000},
		{addr: "api.test:443", ip: "127.0.0.3", port: 8443},
		{addr: "localhost:5", ip: "127.0.0.1", port: 5},
		{addr: "10.9.9.9:80", err: "IP (10.9.9.9) is in a blacklisted range (10.0.0.0/8)"},
		{addr: "bad.test", err: "IP (10.1.2.3) is in a blacklisted range (10.0.0.0/8)"},
		{addr: "x.blocked.test:80", err: "hostname (x.blocked.test) is in a blocked pattern (*.blocked.test)"},
	} {
		ip, port, err := d.ResolveAddr(c.addr)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: got %v %d %v, want the error %q", c.addr, ip, port, err, c.err)
			}
			continue
		}
		if err != nil || ip.String() != c.ip || port != c.port {
			t.Errorf("%s: got %v %d %v, want %s %d", c.addr, ip, port, err, c.ip, c.port)
		}
	}
}
