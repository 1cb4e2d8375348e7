package grpc

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/dialer"
	"github.com/metronome-load/metronome/js/modules"
)

// byteCounter counts the bytes a client's connections move on the wire,
// as k6 counts gRPC traffic into data_sent and data_received.
type byteCounter struct {
	sent, received atomic.Int64
	// dialer opens connections under the options' network fence.
	dialer *dialer.Dialer
}

// fence makes c dial under the network options of the VU whose state st
// is, from its local address.
func (c *byteCounter) fence(st *modules.State) {
	o := st.Options
	if o == nil {
		o = &config.Options{}
	}
	c.dialer = dialer.New(net.Dialer{}, o.BlacklistIPs, o.BlockHostnames, o.Hosts).WithNetwork(st.Options.Network(), st.VUID)
}

// dial opens a TCP connection whose traffic c counts.
func (c *byteCounter) dial(ctx context.Context, addr string) (net.Conn, error) {
	conn, err := c.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: conn, c: c}, nil
}

// countedConn is a net.Conn that adds what it moves to a byteCounter.
type countedConn struct {
	net.Conn
	c *byteCounter
}

func (cc *countedConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	cc.c.received.Add(int64(n))
	return n, err
}

func (cc *countedConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.c.sent.Add(int64(n))
	return n, err
}
