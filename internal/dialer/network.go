package dialer

import "net"

// Network is what every connection of a test run shares: the resolver of
// the dns option, whose cache and round-robin turns are test-wide as in
// k6, and the local addresses of the localIPs option. A nil *Network
// leaves a Dialer as New made it: k6's default resolver of its own, and
// the system's choice of local address.
type Network struct {
	resolver *Resolver
	local    *IPPool // nil: no localIPs
}

// NewNetwork returns the Network of a run under the dns option and the
// localIPs pool (nil when the option is unset).
func NewNetwork(dns DNS, local *IPPool) *Network {
	return &Network{resolver: NewResolver(dns, nil), local: local}
}

// LocalAddr is the address VU vu dials from (nil: the system chooses).
func (n *Network) LocalAddr(vu uint64) net.Addr {
	if n == nil || n.local == nil {
		return nil
	}
	return &net.TCPAddr{IP: n.local.For(vu)}
}

// WithNetwork makes d resolve names with n's resolver and dial from the
// local address of VU vu, and returns d. Call it before d dials.
func (d *Dialer) WithNetwork(n *Network, vu uint64) *Dialer {
	if n == nil {
		return d
	}
	d.resolver = n.resolver
	if a := n.LocalAddr(vu); a != nil {
		d.base.LocalAddr = a
	}
	return d
}

// ForVU returns a copy of d that resolves names with n's resolver and
// dials from the local address of VU vu; d is unchanged, so one fence
// serves every VU of a run.
func (d *Dialer) ForVU(n *Network, vu uint64) *Dialer {
	c := *d
	return c.WithNetwork(n, vu)
}
