package config

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/exitcode"
)

func str(s string) *string { return &s }

func dnsText(d DNS) string {
	f := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	return "ttl=" + f(d.TTL) + " select=" + f(d.Select) + " policy=" + f(d.Policy)
}

// TestDNSOption checks the dns option in every tier: k6's grammar, the
// errors of what k6 refuses (exit 104, naming the option or variable),
// and layering field by field.
func TestDNSOption(t *testing.T) {
	o, err := Parse([]byte(`{"dns": {"ttl": "1m", "select": null, "policy": "onlyIPv6", "selct": "first"}}`), "script options")
	if err != nil {
		t.Fatal(err)
	}
	if got := dnsText(o.DNS); got != "ttl=1m select=- policy=onlyIPv6" {
		t.Errorf("script dns: %s", got)
	}
	if w := strings.Join(o.Warnings, "|"); w != "options.dns.selct: the dns option has no such field (ttl, select, policy); it is ignored, as in k6" {
		t.Errorf("warnings: %q", w)
	}

	for _, c := range []struct{ json, want string }{
		{`{"dns": {"select": "bogus"}}`, `options.dns.select: bogus does not belong to the DNS select values: use first, random or roundRobin (in script options)`},
		{`{"dns": {"select": "First"}}`, `options.dns.select: First does not belong to the DNS select values`},
		{`{"dns": {"policy": "x"}}`, `options.dns.policy: x does not belong to the DNS policy values: use preferIPv4, preferIPv6, onlyIPv4, onlyIPv6 or any`},
		{`{"dns": {"ttl": "abc"}}`, `options.dns.ttl: invalid DNS TTL: abc (use inf, 0 or a duration such as 5m; a bare number is milliseconds)`},
		{`{"dns": {"ttl": "-1s"}}`, `options.dns.ttl: invalid DNS TTL: -1s`},
		{`{"dns": {"ttl": 300}}`, `options.dns.ttl: expected a string, got 300`},
		{`{"dns": {"select": 1}}`, `options.dns.select: expected a string, got 1`},
		{`{"dns": "ttl=5m"}`, `options.dns: expected an object such as {"ttl": "5m", "select": "first", "policy": "preferIPv4"}, got "ttl=5m"`},
		{`{"dns": []}`, `options.dns: expected an object`},
	} {
		_, err := Parse([]byte(c.json), "script options")
		if err == nil || !strings.Contains(err.Error(), c.want) || exitcode.Of(err) != exitcode.InvalidConfig {
			t.Errorf("%s: %v (exit %d), want %q, exit 104", c.json, err, exitcode.Of(err), c.want)
		}
	}
	for _, ok := range []string{`{"dns": null}`, `{"dns": {}}`, `{"dns": {"ttl": "inf"}}`, `{"dns": {"ttl": "0"}}`, `{"dns": {"ttl": "1000"}}`,
		`{"dns": {"ttl": "1d"}}`, `{"dns": {"ttl": ""}}`, `{"dns": {"select": "roundRobin", "policy": "any"}}`} {
		if _, err := Parse([]byte(ok), "script options"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}

	env, err := FromEnv(map[string]string{"K6_DNS": "select=first"})
	if err != nil {
		t.Fatal(err)
	}
	flags := &Options{}
	if err := flags.Set("dns", "policy=any,ttl=inf,policy=preferIPv6"); err != nil {
		t.Fatal(err)
	}
	r, err := Consolidate(o, env, flags)
	if err != nil {
		t.Fatal(err)
	}
	if got := dnsText(r.DNS); got != "ttl=inf select=first policy=preferIPv6" {
		t.Errorf("script, env and flags layered: %s", got)
	}
	// k6 takes its flag's default text as setting nothing.
	if err := flags.Set("dns", "ttl=5m,select=random,policy=preferIPv4"); err != nil {
		t.Fatal(err)
	}
	if r, err = Consolidate(o, env, flags); err != nil || dnsText(r.DNS) != "ttl=1m select=first policy=onlyIPv6" {
		t.Errorf("the default text overrode lower tiers: %s, %v", dnsText(r.DNS), err)
	}
	if b, _ := json.Marshal(&Options{}); !strings.Contains(string(b), `"dns":{"ttl":null,"select":null,"policy":null}`) {
		t.Errorf("unset dns marshals as %s; k6's exec.test.options shows every field null", b)
	}

	for _, c := range []struct{ value, want string }{
		{"select=bogus", "K6_DNS: bogus does not belong to the DNS select values"},
		{"ttl", "K6_DNS: no value for key ttl: write ttl=…,select=…,policy=…"},
		{"select=first,", "K6_DNS: no value for key : write"},
		{"foo=bar", `K6_DNS: unknown DNS configuration field "foo": use ttl, select and policy`},
		{"ttl=5m, select=first", `K6_DNS: unknown DNS configuration field " select"`},
		{"ttl=abc", "K6_DNS: invalid DNS TTL: abc"},
	} {
		_, err := FromEnv(map[string]string{"K6_DNS": c.value})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || exitcode.Of(err) != exitcode.InvalidConfig {
			t.Errorf("K6_DNS=%s: %v, want %q, exit 104", c.value, err, c.want)
		}
	}
}

// TestLocalIPsOption checks that localIPs is read from K6_LOCAL_IPS and
// flags only, as in k6, with k6's errors, and becomes the run's pool.
func TestLocalIPsOption(t *testing.T) {
	o, err := Parse([]byte(`{"localIPs": "10.9.9.9", "vus": 1}`), "script options")
	if err != nil {
		t.Fatal(err)
	}
	if o.LocalIPs != nil || strings.Join(o.Warnings, "|") != "options.localIPs: k6 reads this option only from K6_LOCAL_IPS and --local-ips, and ignores it here; so does metronome" {
		t.Errorf("script localIPs: %v, warnings %q", o.LocalIPs, o.Warnings)
	}
	env, err := FromEnv(map[string]string{"K6_LOCAL_IPS": "127.0.0.5-127.0.0.7"})
	if err != nil {
		t.Fatal(err)
	}
	flags := &Options{}
	if err := flags.Set("localIPs", "127.0.0.8,127.0.0.0/30"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tiers []*Options
		want  string
	}{{[]*Options{o}, "<nil>"}, {[]*Options{o, env}, "127.0.0.5 127.0.0.6 127.0.0.7 127.0.0.5"}, {[]*Options{o, env, flags}, "127.0.0.8 127.0.0.1 127.0.0.2 127.0.0.8"}} {
		r, err := Consolidate(c.tiers...)
		if err != nil {
			t.Fatal(err)
		}
		n := r.Network()
		if n != r.Network() {
			t.Errorf("the run's options built two Networks: VUs would not share the resolver")
		}
		var got []string
		for vu := uint64(1); vu <= 4; vu++ {
			if a := n.LocalAddr(vu); a != nil {
				got = append(got, a.(*net.TCPAddr).IP.String())
			} else {
				got = append(got, "<nil>")
				break
			}
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%d tiers: VUs 1–4 dial from %s, want %s", len(c.tiers), g, c.want)
		}
	}
	for _, c := range []struct{ value, want string }{
		{"10.0.0.5-10.0.0.1", "K6_LOCAL_IPS: negative IP range: 10.0.0.5-10.0.0.1"},
		{"10.0.0.1-::1", "K6_LOCAL_IPS: mixed IP range format: 10.0.0.1-::1"},
		{"abc", "K6_LOCAL_IPS: abc is not a valid IP, IP range or CIDR"},
		{"10.0.0.1, 10.0.0.2", "K6_LOCAL_IPS:  10.0.0.2 is not a valid IP, IP range or CIDR"},
	} {
		_, err := FromEnv(map[string]string{"K6_LOCAL_IPS": c.value})
		if err == nil || err.Error() != c.want || exitcode.Of(err) != exitcode.InvalidConfig {
			t.Errorf("K6_LOCAL_IPS=%s: %v, want %q, exit 104", c.value, err, c.want)
		}
	}
}
