package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/metronome-load/metronome/internal/dialer"
	"github.com/metronome-load/metronome/optdecode"
)

// DNS is the dns option as the tiers write it: how a name becomes the one
// address a connection dials (dialer.Resolver). A nil field is left to the
// tiers below, then to k6's default (ttl 5m, select random, policy
// preferIPv4); tiers are layered field by field, as in k6.
type DNS struct {
	// TTL is "inf", "0" or a duration; it stays as written.
	TTL *string `json:"ttl"`
	// Select is first, random or roundRobin.
	Select *string `json:"select"`
	// Policy is preferIPv4, preferIPv6, onlyIPv4, onlyIPv6 or any.
	Policy *string `json:"policy"`
}

// dnsFields are the dns option's fields in the order errors report them.
var dnsFields = []string{"ttl", "select", "policy"}

func (d *DNS) field(name string) **string {
	switch name {
	case "ttl":
		return &d.TTL
	case "select":
		return &d.Select
	default:
		return &d.Policy
	}
}

func (d DNS) set() bool { return d.TTL != nil || d.Select != nil || d.Policy != nil }

// merge sets in d the fields higher sets.
func (d *DNS) merge(higher DNS) {
	for _, f := range dnsFields {
		setPtr(d.field(f), *higher.field(f))
	}
}

// decodeDNS reads the dns option's JSON: an object of strings, null
// leaving a field unset. Keys other than ttl, select and policy are
// ignored, as k6 ignores them; dnsWarnings names them.
func decodeDNS(path string, raw json.RawMessage) (DNS, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return DNS{}, optdecode.Errorf(path, `expected an object such as {"ttl": "5m", "select": "first", "policy": "preferIPv4"}, got %s`, describe(raw))
	}
	var d DNS
	for _, f := range dnsFields {
		v, ok := fields[f]
		if !ok || isNull(v) {
			continue
		}
		s, err := optdecode.String(path+"."+f, v)
		if err != nil {
			return DNS{}, err
		}
		*d.field(f) = &s
	}
	return d, nil
}

// dnsWarnings names the keys of the dns option's JSON that are not its
// fields: k6 ignores them silently, which hides a misspelt field.
func dnsWarnings(path string, raw json.RawMessage) []string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return nil
	}
	var out []string
	for _, k := range sortedKeys(fields) {
		if !slices.Contains(dnsFields, k) {
			out = append(out, fmt.Sprintf("%s.%s: the dns option has no such field (ttl, select, policy); it is ignored, as in k6", path, k))
		}
	}
	return out
}

// dnsDefaultText is the text form of k6's default dns option. k6 takes
// exactly this text, in K6_DNS or --dns, as setting nothing (it is its
// flag's default value), so a lower tier's fields stay; so does metronome.
const dnsDefaultText = "ttl=5m,select=random,policy=preferIPv4"

// parseDNSText reads the dns option's text form (K6_DNS, --dns):
// comma-separated key=value pairs of ttl, select and policy, the last of
// a repeated key winning; items are taken as written, so a space after a
// comma makes an unknown key, as in k6.
func parseDNSText(s string) (DNS, error) {
	var d DNS
	if s == dnsDefaultText {
		return d, nil
	}
	for _, item := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(item, "=")
		if v == "" {
			return DNS{}, fmt.Errorf("no value for key %s: write ttl=…,select=…,policy=…", item)
		}
		switch k {
		case "ttl", "select", "policy":
			*d.field(k) = &v
		default:
			return DNS{}, fmt.Errorf("unknown DNS configuration field %q: use ttl, select and policy", k)
		}
	}
	return d, nil
}

// checkDNS checks each field the dns option sets.
func checkDNS(v any) error {
	_, err := v.(DNS).resolve()
	return err
}

// resolve returns the dns option ready for the dialer: the fields set,
// k6's defaults for the others.
func (d DNS) resolve() (dialer.DNS, error) {
	r := dialer.DefaultDNS
	var err error
	if d.TTL != nil {
		if r.TTL, err = dialer.ParseTTL(*d.TTL); err != nil {
			return r, at(".ttl", "%v", err)
		}
	}
	if d.Select != nil {
		if r.Select, err = dialer.ParseSelect(*d.Select); err != nil {
			return r, at(".select", "%v", err)
		}
	}
	if d.Policy != nil {
		if r.Policy, err = dialer.ParsePolicy(*d.Policy); err != nil {
			return r, at(".policy", "%v", err)
		}
	}
	return r, nil
}

func checkLocalIPs(v any) error {
	_, err := dialer.ParseIPPool(v.(string))
	return err
}

// networkMemo holds the Network of a run's consolidated options, built
// on first use.
type networkMemo struct {
	once sync.Once
	n    *dialer.Network
}

// Network returns what every connection of a run under o shares, as in
// k6: the resolver of the dns option, whose cache and round-robin turns
// are test-wide, and the local addresses of localIPs. Options made by
// Consolidate (the run's) build it once, so all VUs share it; others
// build a new one on each call. Nil (k6's defaults for each dialer) when
// o is nil or was not validated.
func (o *Options) Network() *dialer.Network {
	if o == nil {
		return nil
	}
	if o.network == nil {
		return o.buildNetwork()
	}
	o.network.once.Do(func() { o.network.n = o.buildNetwork() })
	return o.network.n
}

func (o *Options) buildNetwork() *dialer.Network {
	dns, err := o.DNS.resolve()
	if err != nil {
		return nil
	}
	var pool *dialer.IPPool
	if o.LocalIPs != nil && *o.LocalIPs != "" {
		if pool, err = dialer.ParseIPPool(*o.LocalIPs); err != nil {
			return nil
		}
	}
	return dialer.NewNetwork(dns, pool)
}

// CheckHostnamePattern checks one entry of blockHostnames (or a name of
// hosts): a host name, optionally starting with a * that stands for any
// beginning. It is the rule the options are read by, for extensions'
// HostnameTrie too.
func CheckHostnamePattern(p string) error { return dialer.CheckHostnamePattern(p) }

// MatchHostname reports which of the blockHostnames patterns (lower case)
// host matches, the name itself over a wildcard, else the longest: the
// rule metronome's dialer refuses connections by, for extensions'
// HostnameTrie too.
func MatchHostname(patterns []string, host string) (string, bool) {
	return dialer.MatchHostname(patterns, host)
}
