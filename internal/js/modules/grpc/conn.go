package grpc

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/metronome-load/metronome/js/modules"
)

// byteCounter counts the bytes a client's connections move on the wire,
// as k6 counts gRPC traffic into data_sent and data_received.
type byteCounter struct {
	sent, received atomic.Int64
	// dialer opens connections under the options' network fence: the
	// VU's (modules.Run.Dialer).
	dialer modules.Dialer
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
