package netext

import (
	"net"

	"go.k6.io/k6/v2/lib"
)

// This file is metronome's, not k6's API.

// MetronomeDialer returns metronome's dialer vu of a VU as k6's, each
// connection it opens passed through count (the VU's byte counter) when
// count is not nil, its fields those of the options o.
func MetronomeDialer(vu lib.DialContexter, count func(net.Conn) net.Conn, o lib.Options) *Dialer {
	return &Dialer{vu: vu, count: count, Blacklist: o.BlacklistIPs, BlockedHostnames: o.BlockedHostnames.Trie}
}
