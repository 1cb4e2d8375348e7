// Package dialer opens the TCP connections of a test's requests (HTTP,
// WebSocket, gRPC) under k6's network options: hosts pins names to
// addresses, blockHostnames refuses names, blacklistIPs refuses address
// ranges, dns says how a name becomes the one address dialled and
// localIPs which local address a VU dials from. The fence options keep a
// load test off what it must not reach, so they are checked on every
// connection, on the address actually dialled: a name is resolved here,
// in k6's order (blockHostnames on the name, then hosts, then the dns
// resolver, then blacklistIPs on the address it chose).
package dialer

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Dialer dials as its base net.Dialer does, under the rules it was made
// with. Its zero value is not usable; make one with New.
type Dialer struct {
	base      net.Dialer
	blacklist []*net.IPNet
	blocked   []string // lower-case hostname patterns
	hosts     []pin
	// resolver turns names into the address dialled (WithNetwork gives
	// the test's shared one).
	resolver *Resolver
	// err, when rules do not parse, fails every dial: a fence that cannot
	// be built lets nothing through (options are checked before a test
	// starts, so this is a programming error, not a user's).
	err error
}

// pin is one entry of the hosts option: a name pattern, optionally with a
// port, and the address it goes to (port 0: the dialled one).
type pin struct {
	pattern string // lower case
	ip      net.IP
	port    int
}

// BlacklistedError refuses a connection to an address in a range of the
// blacklistIPs option. Its text is k6's.
type BlacklistedError struct {
	IP    net.IP
	Range *net.IPNet
}

func (e *BlacklistedError) Error() string {
	return fmt.Sprintf("IP (%s) is in a blacklisted range (%s)", e.IP, e.Range)
}

// BlockedError refuses a connection to a name the blockHostnames option
// blocks. Its text is k6's.
type BlockedError struct {
	Host, Pattern string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("hostname (%s) is in a blocked pattern (%s)", e.Host, e.Pattern)
}

// New returns a Dialer that dials with base under the options
// blacklistIPs (CIDR ranges), blockHostnames (name patterns, see
// CheckHostnamePattern) and hosts (see CheckHost). With none of them it
// dials as base does, except that a name goes through k6's default
// resolver (a Resolver of its own, until WithNetwork gives it the test's).
func New(base net.Dialer, blacklistIPs, blockHostnames []string, hosts map[string]string) *Dialer {
	d := &Dialer{base: base, resolver: NewResolver(DefaultDNS, systemLookup(base.Resolver))}
	for _, s := range blacklistIPs {
		n, err := ParseIPRange(s)
		if err != nil {
			d.err = err
			return d
		}
		d.blacklist = append(d.blacklist, n)
	}
	for _, p := range blockHostnames {
		if err := CheckHostnamePattern(p); err != nil {
			d.err = err
			return d
		}
		d.blocked = append(d.blocked, strings.ToLower(p))
	}
	for k, v := range hosts {
		ip, port, err := parseHost(k, v)
		if err != nil {
			d.err = err
			return d
		}
		d.hosts = append(d.hosts, pin{pattern: strings.ToLower(k), ip: ip, port: port})
	}
	return d
}

// DialContext connects to addr (host:port) on network. A name goes
// through blockHostnames, then hosts, then the resolver, and the address
// that comes out through blacklistIPs, as in k6: the one address the
// resolver chose is dialled or refused, never another of the name's.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if d.err != nil {
			return nil, d.err
		}
		return nil, err
	}
	ip, port, literal, err := d.route(ctx, host, port)
	if err != nil {
		return nil, err
	}
	if !literal {
		addr = net.JoinHostPort(ip.String(), port)
	}
	return d.base.DialContext(ctx, network, addr)
}

// ResolveAddr returns the address DialContext would connect to for addr,
// "host:port" or a bare host (port 0), under the same rules and with the
// same refusals. It is k6's lib.AddrResolver, which extensions find on
// their VU's dialer.
func (d *Dialer) ResolveAddr(addr string) (net.IP, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "0"
	}
	ip, port, _, err := d.route(context.Background(), host, port)
	if err != nil {
		return nil, 0, err
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %q is not a port", addr, port)
	}
	return ip, n, nil
}

// route is where host:port goes under the options: the address and port
// dialled, and whether that is host itself (a literal address no option
// moved).
func (d *Dialer) route(ctx context.Context, host, port string) (ip net.IP, to string, literal bool, err error) {
	if d.err != nil {
		return nil, "", false, d.err
	}
	ip = net.ParseIP(host)
	if ip == nil {
		if p, ok := MatchHostname(d.blocked, host); ok {
			return nil, "", false, &BlockedError{Host: host, Pattern: p}
		}
	}
	literal = ip != nil
	if pin, ok := d.pinned(host, port); ok {
		ip, port, literal = pin.ip, strconv.Itoa(pin.port), false
	}
	if ip == nil {
		if ip, err = d.resolver.Resolve(ctx, host); err != nil {
			return nil, "", false, err
		}
	}
	if err := d.check(ip); err != nil {
		return nil, "", false, err
	}
	return ip, port, literal, nil
}

// check refuses ip when a blacklisted range holds it.
func (d *Dialer) check(ip net.IP) error {
	for _, n := range d.blacklist {
		if n.Contains(ip) {
			return &BlacklistedError{IP: ip, Range: n}
		}
	}
	return nil
}

// pinned returns where the hosts option sends host:port: an entry for
// host:port comes before one for host; an entry without a port keeps the
// dialled one.
func (d *Dialer) pinned(host, port string) (pin, bool) {
	if len(d.hosts) == 0 {
		return pin{}, false
	}
	for _, key := range []string{net.JoinHostPort(host, port), host} {
		best := -1
		for i, h := range d.hosts {
			if matches(h.pattern, key) && (best < 0 || moreSpecific(h.pattern, d.hosts[best].pattern)) {
				best = i
			}
		}
		if best >= 0 {
			to := d.hosts[best]
			if to.port == 0 {
				to.port, _ = strconv.Atoi(port)
			}
			return to, true
		}
	}
	return pin{}, false
}

// MatchHostname reports which of the blockHostnames patterns (lower
// case, checked by CheckHostnamePattern) s matches, the most specific
// when several do (moreSpecific), and whether one does.
func MatchHostname(patterns []string, s string) (string, bool) {
	best := ""
	found := false
	for _, p := range patterns {
		if matches(p, s) && (!found || moreSpecific(p, best)) {
			best, found = p, true
		}
	}
	return best, found
}

// matches reports whether s, case aside, is pattern, or ends in what
// follows the * of a pattern starting with one: "*.example.com" matches
// "a.example.com" but not "example.com", "*example.com" both, "*" all.
func matches(pattern, s string) bool {
	s = strings.ToLower(s)
	if rest, ok := strings.CutPrefix(pattern, "*"); ok {
		return strings.HasSuffix(s, rest)
	}
	return s == pattern
}

// moreSpecific reports whether pattern a wins over b when both match: a
// pattern without a wildcard over one with, else the longer.
func moreSpecific(a, b string) bool {
	aw, bw := strings.HasPrefix(a, "*"), strings.HasPrefix(b, "*")
	if aw != bw {
		return !aw
	}
	return len(a) > len(b)
}

// Proxy wraps proxy, the function that picks a request's proxy
// (http.ProxyFromEnvironment), for the requests it sends through one. The
// proxy resolves and connects to the target itself, so the dialer sees
// only the proxy's address and hosts cannot apply; what the options can
// still refuse is refused before the proxy is asked: a host name that
// blockHostnames blocks, and a host that is an IP address in a range of
// blacklistIPs, with the errors of a direct connection. (k6 checks only
// the proxy's address.)
func (d *Dialer) Proxy(proxy func(*http.Request) (*url.URL, error)) func(*http.Request) (*url.URL, error) {
	return func(req *http.Request) (*url.URL, error) {
		u, err := proxy(req)
		if u == nil || err != nil {
			return u, err
		}
		if d.err != nil {
			return nil, d.err
		}
		host := req.URL.Hostname()
		if ip := net.ParseIP(host); ip != nil {
			if err := d.check(ip); err != nil {
				return nil, err
			}
		} else if p, ok := MatchHostname(d.blocked, host); ok {
			return nil, &BlockedError{Host: host, Pattern: p}
		}
		return u, nil
	}
}

// ParseIPRange parses one entry of blacklistIPs: an address range in CIDR
// notation.
func ParseIPRange(s string) (*net.IPNet, error) {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not an address range in CIDR notation, such as 10.0.0.0/8 or fd00::/8", s)
	}
	return n, nil
}

// CheckHostnamePattern checks one entry of blockHostnames: a host name,
// optionally starting with a * that stands for any beginning
// ("*.example.com"), as k6 accepts them.
func CheckHostnamePattern(p string) error {
	if !validPattern(p) {
		return fmt.Errorf("%q is not a host name pattern: letters, digits, hyphens and dots, optionally starting with * or *.", p)
	}
	return nil
}

// CheckHost checks one entry of hosts: a name pattern as blockHostnames
// takes, optionally with :port, that goes to an IP address, optionally
// with :port. A value that is a name cannot be honoured (k6 dials this
// machine for it), so it is refused.
func CheckHost(key, value string) error {
	_, _, err := parseHost(key, value)
	return err
}

func parseHost(key, value string) (net.IP, int, error) {
	name, port, hasPort := strings.Cut(key, ":")
	if !validPattern(name) || (hasPort && !validPort(port)) {
		return nil, 0, fmt.Errorf("%q is not a host name pattern with an optional :port, such as api.example.com or *.example.com:443", key)
	}
	host, p := value, 0
	if h, ps, err := net.SplitHostPort(value); err == nil {
		if !validPort(ps) {
			return nil, 0, fmt.Errorf("%s: %q has no valid port", key, value)
		}
		host = h
		p, _ = strconv.Atoi(ps)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return nil, 0, fmt.Errorf("%s: %q is not an IP address or IP:port; hosts cannot send a name to another name", key, value)
	}
	return ip, p, nil
}

func validPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && len(s) <= 5 && n >= 0 && n <= 65535 && strings.Trim(s, "0123456789") == ""
}

// validPattern reports whether p is an optional "*" or "*." followed by
// dot-separated labels of letters, digits and inner hyphens (nothing at
// all after the * is fine: "*" matches every name).
func validPattern(p string) bool {
	if rest, ok := strings.CutPrefix(p, "*"); ok {
		p = strings.TrimPrefix(rest, ".")
		if p == "" {
			return true
		}
	}
	if p == "" {
		return true
	}
	for _, label := range strings.Split(p, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
