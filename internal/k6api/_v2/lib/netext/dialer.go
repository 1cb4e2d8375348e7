package netext

import (
	"context"
	"errors"
	"net"

	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/types"
)

// Dialer is the type of a VU's State.Dialer: it dials under the test's
// hosts, blacklistIPs and blockHostnames, and its fields show the fence to
// extensions that check names themselves before asking a server about
// them (xk6-dns checks BlockedHostnames so). A Dialer made outside
// metronome dials as its net.Dialer does.
type Dialer struct {
	net.Dialer

	// Blacklist are the ranges of blacklistIPs.
	Blacklist []*lib.IPNet
	// BlockedHostnames are the patterns of blockHostnames, nil without any.
	BlockedHostnames *types.HostnameTrie

	// vu is metronome's dialer of the VU, count what passes its
	// connections through the VU's byte counter (nil: none).
	vu    lib.DialContexter
	count func(net.Conn) net.Conn
}

// DialContext connects to addr on network.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if d.vu == nil {
		return d.Dialer.DialContext(ctx, network, addr)
	}
	conn, err := d.vu.DialContext(ctx, network, addr)
	if err != nil || d.count == nil {
		return conn, err
	}
	return d.count(conn), nil
}

// ResolveAddr returns the address DialContext would connect to for addr,
// "host[:port]", under the same options; a Dialer made outside metronome
// resolves nothing.
func (d *Dialer) ResolveAddr(addr string) (net.IP, int, error) {
	r, ok := d.vu.(lib.AddrResolver)
	if !ok {
		return nil, 0, errors.New("the dialer resolves no addresses")
	}
	return r.ResolveAddr(addr)
}
