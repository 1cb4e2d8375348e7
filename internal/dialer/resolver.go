package dialer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/metronome-load/metronome/duration"
)

// Select is how the dns option picks the one address a connection dials
// among those a name has.
type Select uint8

// The select values of the dns option.
const (
	// SelectRandom picks any address, each as likely: k6's default.
	SelectRandom Select = iota
	// SelectFirst always picks the first address.
	SelectFirst
	// SelectRoundRobin picks the addresses in turn, one turn per name
	// shared by the whole test.
	SelectRoundRobin
)

// Policy is which IP versions the dns option keeps of a name's
// addresses.
type Policy uint8

// The policy values of the dns option.
const (
	// PreferIPv4 keeps the IPv4 addresses, or the IPv6 ones when there
	// are none: k6's default.
	PreferIPv4 Policy = iota
	// PreferIPv6 keeps the IPv6 addresses, or the IPv4 ones when there
	// are none.
	PreferIPv6
	// OnlyIPv4 keeps the IPv4 addresses.
	OnlyIPv4
	// OnlyIPv6 keeps the IPv6 addresses.
	OnlyIPv6
	// AnyIP keeps every address, in the order the lookup gave them.
	AnyIP
)

var (
	selectNames = []string{SelectRandom: "random", SelectFirst: "first", SelectRoundRobin: "roundRobin"}
	policyNames = []string{PreferIPv4: "preferIPv4", PreferIPv6: "preferIPv6", OnlyIPv4: "onlyIPv4", OnlyIPv6: "onlyIPv6", AnyIP: "any"}
)

func (s Select) String() string { return selectNames[s] }
func (p Policy) String() string { return policyNames[p] }

// DefaultTTL is how long a name's addresses are kept when the dns option
// sets no ttl, as in k6.
const DefaultTTL = 5 * time.Minute

// infiniteTTL is what ttl "inf" keeps addresses for: a year, as k6 does.
const infiniteTTL = 365 * 24 * time.Hour

// DNS is the dns option made ready for use.
type DNS struct {
	// TTL is how long a name's addresses are kept after a lookup; 0 looks
	// a name up on every connection.
	TTL    time.Duration
	Select Select
	Policy Policy
}

// DefaultDNS is the dns option's value when no tier sets it.
var DefaultDNS = DNS{TTL: DefaultTTL, Select: SelectRandom, Policy: PreferIPv4}

// ParseSelect reads the select of the dns option: first, random or
// roundRobin, spelt as k6 spells them.
func ParseSelect(s string) (Select, error) {
	for i, n := range selectNames {
		if s == n {
			return Select(i), nil
		}
	}
	return 0, fmt.Errorf("%s does not belong to the DNS select values: use first, random or roundRobin", s)
}

// ParsePolicy reads the policy of the dns option: preferIPv4, preferIPv6,
// onlyIPv4, onlyIPv6 or any.
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if s == n {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("%s does not belong to the DNS policy values: use preferIPv4, preferIPv6, onlyIPv4, onlyIPv6 or any", s)
}

// ParseTTL reads the ttl of the dns option: "inf" keeps addresses for the
// whole test, "0" never keeps them, "" is the default (5m), anything else
// is a duration ("30s", "1d", or a bare number of milliseconds) that must
// not be negative.
func ParseTTL(s string) (time.Duration, error) {
	switch s {
	case "inf":
		return infiniteTTL, nil
	case "0":
		return 0, nil
	case "":
		return DefaultTTL, nil
	}
	d, err := duration.Parse(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid DNS TTL: %s (use inf, 0 or a duration such as 5m; a bare number is milliseconds)", s)
	}
	return d, nil
}

// LookupFunc returns every address of a name.
type LookupFunc func(ctx context.Context, host string) ([]net.IP, error)

// systemLookup looks names up with r (nil: the system's resolver).
func systemLookup(r *net.Resolver) LookupFunc {
	if r == nil {
		r = net.DefaultResolver
	}
	return func(ctx context.Context, host string) ([]net.IP, error) {
		return r.LookupIP(ctx, "ip", host)
	}
}

// NoAddressError says the dns policy left a name no address to dial (an
// IPv6-only name under onlyIPv4, say). Its text is k6's, and like k6's it
// is not a DNS error: the lookup itself succeeded.
type NoAddressError struct{ Host string }

func (e *NoAddressError) Error() string { return fmt.Sprintf("lookup %s: no such host", e.Host) }

// Resolver turns a name into the one address a connection dials, as k6's
// resolver does under the dns option: a name's addresses are looked up,
// filtered by the policy and kept for the ttl, and each connection takes
// one of them by the select rule. A test's connections share one
// Resolver, so its cache and its round-robin turns are test-wide. It is
// safe for concurrent use.
type Resolver struct {
	cfg    DNS
	lookup LookupFunc
	now    func() time.Time

	mu    sync.Mutex
	cache map[string]cached // made on first use, as turn is
	// turn is each name's round-robin position. It counts in a byte, as
	// k6's does, so after 256 connections it starts again from the first
	// address whatever the number of addresses.
	turn map[string]uint8
}

type cached struct {
	ips []net.IP
	at  time.Time
}

// NewResolver returns a Resolver under cfg that looks names up with
// lookup (nil: the system's resolver, as k6 uses).
func NewResolver(cfg DNS, lookup LookupFunc) *Resolver {
	if lookup == nil {
		lookup = systemLookup(nil)
	}
	return &Resolver{cfg: cfg, lookup: lookup, now: time.Now}
}

// Resolve returns the address a connection to host dials, or a
// NoAddressError when the policy leaves none. A failed lookup is not
// kept: the next connection looks the name up again.
func (r *Resolver) Resolve(ctx context.Context, host string) (net.IP, error) {
	ips, err := r.addresses(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, &NoAddressError{Host: host}
	}
	switch r.cfg.Select {
	case SelectFirst:
		return ips[0], nil
	case SelectRoundRobin:
		r.mu.Lock()
		if r.turn == nil {
			r.turn = map[string]uint8{}
		}
		n := r.turn[host]
		r.turn[host] = n + 1
		r.mu.Unlock()
		return ips[int(n)%len(ips)], nil
	default:
		return ips[rand.IntN(len(ips))], nil
	}
}

// addresses returns host's addresses under the policy, from the cache
// while they are younger than the ttl.
func (r *Resolver) addresses(ctx context.Context, host string) ([]net.IP, error) {
	if r.cfg.TTL <= 0 {
		ips, err := r.lookup(ctx, host)
		if err != nil {
			return nil, err
		}
		return r.cfg.Policy.filter(ips), nil
	}
	r.mu.Lock()
	c, ok := r.cache[host]
	r.mu.Unlock()
	if ok && r.now().Before(c.at.Add(r.cfg.TTL)) {
		return c.ips, nil
	}
	ips, err := r.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	ips = r.cfg.Policy.filter(ips)
	r.mu.Lock()
	if r.cache == nil {
		r.cache = map[string]cached{}
	}
	r.cache[host] = cached{ips: ips, at: r.now()}
	r.mu.Unlock()
	return ips, nil
}

// filter keeps the addresses p allows, in their order.
func (p Policy) filter(ips []net.IP) []net.IP {
	if p == AnyIP {
		return ips
	}
	var v4, v6 []net.IP
	for _, ip := range ips {
		if ip.To4() != nil {
			v4 = append(v4, ip)
		} else {
			v6 = append(v6, ip)
		}
	}
	switch p {
	case PreferIPv6:
		if len(v6) > 0 {
			return v6
		}
		return v4
	case OnlyIPv4:
		return v4
	case OnlyIPv6:
		return v6
	default:
		if len(v4) > 0 {
			return v4
		}
		return v6
	}
}
