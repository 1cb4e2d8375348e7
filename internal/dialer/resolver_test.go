package dialer

import (
	"context"
	"errors"
	"math"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer is a loopback DNS server answering A and AAAA questions from
// a fixed table, NXDOMAIN for other names; it counts the A questions per
// name (one per lookup: Go asks A and AAAA once each).
type dnsServer struct {
	addr  string
	table map[string][]net.IP // fully qualified name → addresses
	mu    sync.Mutex
	asked map[string]int
}

func startDNS(t *testing.T, table map[string][]net.IP) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	s := &dnsServer{addr: pc.LocalAddr().String(), table: map[string][]net.IP{}, asked: map[string]int{}}
	for name, ips := range table {
		s.table[name+"."] = ips
	}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out, err := s.answer(buf[:n]); err == nil {
				_, _ = pc.WriteTo(out, from)
			}
		}
	}()
	return s
}

func (s *dnsServer) answer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	name := strings.ToLower(q.Name.String())
	ips, known := s.table[name]
	if q.Type == dnsmessage.TypeA {
		s.mu.Lock()
		s.asked[name]++
		s.mu.Unlock()
	}
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	for _, ip := range ips {
		rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
		switch v4 := ip.To4(); {
		case q.Type == dnsmessage.TypeA && v4 != nil:
			err = b.AResource(rr, dnsmessage.AResource{A: [4]byte(v4)})
		case q.Type == dnsmessage.TypeAAAA && v4 == nil:
			err = b.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: [16]byte(ip.To16())})
		}
		if err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// lookups is how many times name was looked up.
func (s *dnsServer) lookups(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[name+"."]
}

// resolver is a net.Resolver that asks s and nothing else.
func (s *dnsServer) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.addr)
	}}
}

func ips(ss ...string) []net.IP {
	out := make([]net.IP, len(ss))
	for i, s := range ss {
		out[i] = net.ParseIP(s)
	}
	return out
}

// fixed is a lookup that answers every name with the same addresses and
// counts its calls.
type fixed struct {
	ips   []net.IP
	err   error
	calls int
}

func (f *fixed) lookup(context.Context, string) ([]net.IP, error) {
	f.calls++
	return f.ips, f.err
}

// picks resolves host n times and returns the addresses chosen.
func picks(t *testing.T, r *Resolver, host string, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		ip, err := r.Resolve(context.Background(), host)
		if err != nil {
			t.Fatalf("resolve %s: %v", host, err)
		}
		out[i] = ip.String()
	}
	return out
}

// TestSelectAndPolicyAsK6 checks which address each select and policy
// gives for a name with three IPv4 addresses and one IPv6, in the order
// a lookup returns them. The orders are what k6 v2.2.0 dialled for
// such a name (test/compat/corpus/24x-dns-*.js records them).
func TestSelectAndPolicyAsK6(t *testing.T) {
	all := ips("::1", "127.0.0.2", "127.0.0.3", "127.0.0.4")
	cases := []struct {
		sel    Select
		policy Policy
		want   string
	}{
		{SelectFirst, PreferIPv4, "127.0.0.2 127.0.0.2 127.0.0.2 127.0.0.2 127.0.0.2"},
		{SelectFirst, PreferIPv6, "::1 ::1 ::1 ::1 ::1"},
		{SelectFirst, OnlyIPv4, "127.0.0.2 127.0.0.2 127.0.0.2 127.0.0.2 127.0.0.2"},
		{SelectFirst, OnlyIPv6, "::1 ::1 ::1 ::1 ::1"},
		{SelectFirst, AnyIP, "::1 ::1 ::1 ::1 ::1"},
		{SelectRoundRobin, PreferIPv4, "127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.2 127.0.0.3"},
		{SelectRoundRobin, PreferIPv6, "::1 ::1 ::1 ::1 ::1"},
		{SelectRoundRobin, OnlyIPv4, "127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.2 127.0.0.3"},
		{SelectRoundRobin, AnyIP, "::1 127.0.0.2 127.0.0.3 127.0.0.4 ::1"},
	}
	for _, c := range cases {
		f := &fixed{ips: all}
		r := NewResolver(DNS{TTL: DefaultTTL, Select: c.sel, Policy: c.policy}, f.lookup)
		if got := strings.Join(picks(t, r, "multi.test", 5), " "); got != c.want {
			t.Errorf("select %s, policy %s: dialled %s, want %s", c.sel, c.policy, got, c.want)
		}
		if f.calls != 1 {
			t.Errorf("select %s, policy %s: %d lookups for 5 connections within the ttl, want 1", c.sel, c.policy, f.calls)
		}
	}
}

// TestRoundRobinIsPerNameAndWraps checks that each name has its own turn
// and that the turn counts in a byte, as k6's does: with three addresses
// the 256th and 257th connections both take the first one.
func TestRoundRobinIsPerNameAndWraps(t *testing.T) {
	r := NewResolver(DNS{TTL: DefaultTTL, Select: SelectRoundRobin}, (&fixed{ips: ips("10.0.0.1", "10.0.0.2", "10.0.0.3")}).lookup)
	if got := strings.Join(append(picks(t, r, "a.test", 2), picks(t, r, "b.test", 2)...), " "); got != "10.0.0.1 10.0.0.2 10.0.0.1 10.0.0.2" {
		t.Errorf("two names share a turn: %s", got)
	}
	got := picks(t, r, "a.test", 256)
	// a.test has had turns 0 and 1: got[i] is turn 2+i, modulo 256.
	// Turns 254 and 255 take addresses 254%3 and 255%3; then the turn
	// is 0 again, and 0 and 1 take the first and second.
	if tail := strings.Join(got[252:], " "); tail != "10.0.0.3 10.0.0.1 10.0.0.1 10.0.0.2" {
		t.Errorf("turns 254, 255, 256, 257 of a.test: %s, want 10.0.0.3 10.0.0.1 10.0.0.1 10.0.0.2 (the turn wraps at 256)", tail)
	}
}

// TestRandomIsUniform checks select random by its distribution: every
// address the policy keeps is taken about as often, no other ever.
func TestRandomIsUniform(t *testing.T) {
	r := NewResolver(DefaultDNS, (&fixed{ips: ips("::1", "10.0.0.1", "10.0.0.2", "10.0.0.3")}).lookup)
	const n = 3000
	count := map[string]int{}
	for _, ip := range picks(t, r, "r.test", n) {
		count[ip]++
	}
	// Each of 3 addresses: binomial(3000, 1/3), mean 1000, sd 25.8; six
	// sd either side fails once in 10⁹ runs.
	sd := math.Sqrt(n * (1.0 / 3) * (2.0 / 3))
	for _, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		if c := float64(count[ip]); math.Abs(c-n/3) > 6*sd {
			t.Errorf("%s taken %v times of %d, want %d ± %.0f", ip, c, n, n/3, 6*sd)
		}
	}
	if len(count) != 3 {
		t.Errorf("addresses taken: %v; preferIPv4 keeps only the three IPv4 ones", count)
	}
}

// TestPolicyLeavesNothing checks k6's error when the policy leaves a name
// no address: "lookup NAME: no such host", not a DNS error (k6 gives it
// error_code 1000, not 1101).
func TestPolicyLeavesNothing(t *testing.T) {
	for _, c := range []struct {
		policy Policy
		ips    []net.IP
	}{{OnlyIPv4, ips("::1")}, {OnlyIPv6, ips("127.0.0.5")}} {
		r := NewResolver(DNS{Policy: c.policy}, (&fixed{ips: c.ips}).lookup)
		_, err := r.Resolve(context.Background(), "x.test")
		var na *NoAddressError
		var dns *net.DNSError
		if !errors.As(err, &na) || errors.As(err, &dns) || err.Error() != "lookup x.test: no such host" {
			t.Errorf("policy %s on %v: %v (%T), want a NoAddressError \"lookup x.test: no such host\"", c.policy, c.ips, err, err)
		}
	}
}

// TestTTL checks the cache: a name's addresses (after the policy) are kept
// for the ttl from their lookup, per name; ttl 0 keeps nothing; a failed
// lookup is not kept.
func TestTTL(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	f := &fixed{ips: ips("::1")}
	r := NewResolver(DNS{TTL: time.Minute, Select: SelectFirst, Policy: OnlyIPv4}, f.lookup)
	r.now = clock
	ctx := context.Background()
	step := func(at time.Duration, host string, wantCalls int) {
		t.Helper()
		now = time.Unix(1000, 0).Add(at)
		_, _ = r.Resolve(ctx, host)
		if f.calls != wantCalls {
			t.Errorf("at +%s, %s: %d lookups so far, want %d", at, host, f.calls, wantCalls)
		}
	}
	step(0, "a.test", 1)
	step(59*time.Second, "a.test", 1) // kept, though the policy left nothing
	step(59*time.Second, "b.test", 2) // another name
	step(time.Minute, "a.test", 3)    // expired at exactly the ttl
	step(time.Minute+time.Second, "a.test", 3)
	f.err = errors.New("refused")
	step(2*time.Minute+time.Second, "a.test", 4)
	step(2*time.Minute+time.Second, "a.test", 5) // the failure was not kept

	g := &fixed{ips: ips("10.0.0.1")}
	r = NewResolver(DNS{TTL: 0}, g.lookup)
	picks(t, r, "c.test", 3)
	if g.calls != 3 {
		t.Errorf("ttl 0: %d lookups for 3 connections, want 3", g.calls)
	}
}

// TestParseDNS checks the grammar of the dns option's fields against what
// k6 v2.2.0 accepts and refuses.
func TestParseDNS(t *testing.T) {
	ttls := map[string]time.Duration{"inf": infiniteTTL, "0": 0, "": DefaultTTL, "5m": 5 * time.Minute,
		"1000": time.Second, "1d": 24 * time.Hour, "0s": 0, "1.5": 1500 * time.Microsecond}
	for s, want := range ttls {
		if got, err := ParseTTL(s); err != nil || got != want {
			t.Errorf("ttl %q: %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"abc", "-1s", "-1", "infinite", "5 m"} {
		if _, err := ParseTTL(s); err == nil || !strings.HasPrefix(err.Error(), "invalid DNS TTL: "+s) {
			t.Errorf("ttl %q: %v, want k6's \"invalid DNS TTL: %s\"", s, err, s)
		}
	}
	for _, s := range []string{"first", "random", "roundRobin"} {
		if v, err := ParseSelect(s); err != nil || v.String() != s {
			t.Errorf("select %q: %v, %v", s, v, err)
		}
	}
	for _, s := range []string{"preferIPv4", "preferIPv6", "onlyIPv4", "onlyIPv6", "any"} {
		if v, err := ParsePolicy(s); err != nil || v.String() != s {
			t.Errorf("policy %q: %v, %v", s, v, err)
		}
	}
	// k6's names are case-sensitive.
	for _, s := range []string{"First", "roundrobin", "", "bogus"} {
		if _, err := ParseSelect(s); err == nil || !strings.HasPrefix(err.Error(), s+" does not belong to the DNS select values") {
			t.Errorf("select %q: %v", s, err)
		}
	}
	for _, s := range []string{"ipv4", "Any", ""} {
		if _, err := ParsePolicy(s); err == nil || !strings.HasPrefix(err.Error(), s+" does not belong to the DNS policy values") {
			t.Errorf("policy %q: %v", s, err)
		}
	}
}

// listenOn starts a listener on each address on one port, each answering
// a connection with the address it was reached at, and returns the port.
func listenOn(t *testing.T, addrs ...string) string {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		var ls []net.Listener
		port := "0"
		for _, a := range addrs {
			l, err := net.Listen("tcp", net.JoinHostPort(a, port))
			if err != nil {
				break
			}
			ls = append(ls, l)
			_, port, _ = net.SplitHostPort(l.Addr().String())
		}
		if len(ls) < len(addrs) {
			for _, l := range ls {
				_ = l.Close()
			}
			continue
		}
		for _, l := range ls {
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
		}
		return port
	}
	t.Skipf("cannot listen on %v with one port", addrs)
	return ""
}

// TestDialerThroughDNS dials names a loopback DNS server answers, under
// the dns option and the fence options, in k6's order: blockHostnames and
// hosts are decided before any lookup, the blacklist on the one address
// the resolver chose (no other address is tried).
func TestDialerThroughDNS(t *testing.T) {
	srv := startDNS(t, map[string][]net.IP{
		"multi.test": ips("127.0.0.2", "127.0.0.3", "::1"),
		"six.test":   ips("::1"),
	})
	port := listenOn(t, "127.0.0.2", "127.0.0.3", "::1")
	network := func(cfg DNS) *Network { return &Network{resolver: NewResolver(cfg, systemLookup(srv.resolver()))} }
	dial := func(d *Dialer, host string) string {
		t.Helper()
		c, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(host, port))
		if err != nil {
			return err.Error()
		}
		defer c.Close()
		h, _, _ := net.SplitHostPort(c.RemoteAddr().String())
		return h
	}
	seq := func(d *Dialer, host string, n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = dial(d, host)
		}
		return strings.Join(out, " ")
	}

	rr := network(DNS{TTL: DefaultTTL, Select: SelectRoundRobin})
	// Two VUs' dialers share the network's turn and cache.
	d1 := New(net.Dialer{}, nil, nil, nil).WithNetwork(rr, 1)
	d2 := New(net.Dialer{}, nil, nil, nil).WithNetwork(rr, 2)
	if got := seq(d1, "multi.test", 2) + " " + seq(d2, "multi.test", 2); got != "127.0.0.2 127.0.0.3 127.0.0.2 127.0.0.3" {
		t.Errorf("roundRobin over two VUs dialled %s", got)
	}
	if n := srv.lookups("multi.test"); n != 1 {
		t.Errorf("%d lookups of multi.test for 4 connections within the ttl, want 1", n)
	}

	d := New(net.Dialer{}, nil, nil, nil).WithNetwork(network(DNS{TTL: 0, Select: SelectFirst, Policy: PreferIPv6}), 1)
	if got := seq(d, "multi.test", 2); got != "::1 ::1" {
		t.Errorf("first, preferIPv6 dialled %s", got)
	}
	if n := srv.lookups("multi.test"); n != 3 {
		t.Errorf("ttl 0: %d lookups of multi.test in all, want 3", n)
	}

	d = New(net.Dialer{}, nil, nil, nil).WithNetwork(network(DNS{Select: SelectFirst, Policy: OnlyIPv4}), 1)
	if got := dial(d, "six.test"); got != "lookup six.test: no such host" {
		t.Errorf("onlyIPv4 on an IPv6-only name: %s", got)
	}

	fenced := New(net.Dialer{}, []string{"127.0.0.2/32"}, []string{"blocked.test"}, map[string]string{"pinned.test": "127.0.0.3"}).
		WithNetwork(network(DNS{TTL: DefaultTTL, Select: SelectFirst}), 1)
	for host, want := range map[string]string{
		"multi.test":   "IP (127.0.0.2) is in a blacklisted range (127.0.0.2/32)",
		"pinned.test":  "127.0.0.3",
		"blocked.test": "hostname (blocked.test) is in a blocked pattern (blocked.test)",
	} {
		if got := dial(fenced, host); got != want {
			t.Errorf("fenced %s: %s, want %s", host, got, want)
		}
	}
	if n := srv.lookups("pinned.test") + srv.lookups("blocked.test"); n != 0 {
		t.Errorf("pinned and blocked names were looked up %d times, want 0", n)
	}
}

// TestIPPoolAsK6 checks which local address each VU gets, as k6 v2.2.0
// gave them (test/compat/corpus/24x-local-ips-*.js records k6's), and the
// pools k6 refuses.
func TestIPPoolAsK6(t *testing.T) {
	cases := map[string]string{
		// VU 0 (setup, teardown), then VUs 1 to 7.
		"127.0.0.5-127.0.0.7":     "127.0.0.5 127.0.0.5 127.0.0.6 127.0.0.7 127.0.0.5 127.0.0.6 127.0.0.7 127.0.0.5",
		"127.0.0.8,127.0.0.0/30":  "127.0.0.8 127.0.0.8 127.0.0.1 127.0.0.2 127.0.0.8 127.0.0.1 127.0.0.2 127.0.0.8",
		"10.0.0.0/31":             "10.0.0.0 10.0.0.0 10.0.0.1 10.0.0.0 10.0.0.1 10.0.0.0 10.0.0.1 10.0.0.0",
		"10.0.0.7/32,10.0.1.1":    "10.0.0.7 10.0.0.7 10.0.1.1 10.0.0.7 10.0.1.1 10.0.0.7 10.0.1.1 10.0.0.7",
		"fd00::/126":              "fd00:: fd00:: fd00::1 fd00::2 fd00::3 fd00:: fd00::1 fd00::2",
		"::1-::2":                 "::1 ::1 ::2 ::1 ::2 ::1 ::2 ::1",
		"10.255.255.254-11.0.0.1": "10.255.255.254 10.255.255.254 10.255.255.255 11.0.0.0 11.0.0.1 10.255.255.254 10.255.255.255 11.0.0.0",
	}
	for s, want := range cases {
		p, err := ParseIPPool(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		var got []string
		for vu := uint64(0); vu < 8; vu++ {
			got = append(got, p.For(vu).String())
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s: VUs 0–7 get %s, want %s", s, g, want)
		}
	}
	huge, err := ParseIPPool("fd00::/64")
	if err != nil {
		t.Fatal(err)
	}
	if got := huge.For(math.MaxUint64).String(); got != "fd00::ffff:ffff:ffff:fffe" {
		t.Errorf("fd00::/64, the last VU: %s", got)
	}
	refused := map[string]string{
		"10.0.0.5-10.0.0.1":  "negative IP range: 10.0.0.5-10.0.0.1",
		"10.0.0.1-::1":       "mixed IP range format: 10.0.0.1-::1",
		"abc":                "abc is not a valid IP, IP range or CIDR",
		"10.0.0.1, 10.0.0.2": " 10.0.0.2 is not a valid IP, IP range or CIDR",
		"10.0.0.0/33":        "10.0.0.0/33 is not a valid CIDR block",
		"10.0.0.1-":          "wrong IP range format: 10.0.0.1-",
		"10.0.0.1,":          " is not a valid IP, IP range or CIDR",
	}
	for s, want := range refused {
		if _, err := ParseIPPool(s); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", s, err, want)
		}
	}
}

// TestLocalAddressPerVU dials a loopback server from the local address of
// each VU and checks the address the server saw.
func TestLocalAddressPerVU(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	peers := make(chan string, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			h, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			peers <- h
			_ = c.Close()
		}
	}()
	pool, err := ParseIPPool("127.0.0.2-127.0.0.4")
	if err != nil {
		t.Fatal(err)
	}
	n := NewNetwork(DefaultDNS, pool)
	var got []string
	for vu := uint64(0); vu <= 5; vu++ {
		c, err := New(net.Dialer{}, nil, nil, nil).WithNetwork(n, vu).DialContext(context.Background(), "tcp", l.Addr().String())
		if err != nil {
			t.Fatalf("VU %d: %v", vu, err)
		}
		_ = c.Close()
		got = append(got, <-peers)
	}
	if g := strings.Join(got, " "); g != "127.0.0.2 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.2 127.0.0.3" {
		t.Errorf("VUs 0–5 came from %s", g)
	}
}
