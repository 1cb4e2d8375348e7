package grpc

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/internal/dialer"
)

// byteCounter counts the bytes a client's connections move on the wire,
// as k6 counts gRPC traffic into data_sent and data_received.
type byteCounter struct {
	sent, received atomic.Int64
	// dialer opens connections under the options' network fence.
	dialer *dialer.Dialer
}

// fence makes c dial under the network options of o (nil: none).
func (c *byteCounter) fence(o *config.Options) {
	if o == nil {
		o = &config.Options{}
	}
	c.dialer = dialer.New(net.Dialer{}, o.BlacklistIPs, o.BlockHostnames, o.Hosts)
}

// dial opens a TCP connection whose traffic c counts.
func (c *byteCounter) dial(ctx context.Context, addr string) (net.Conn, error) {
	conn, err := c.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: conn, c: c}, nil
}

// refusal records the first dial error of a connection that retrying
// cannot cure.
type refusal struct{ err atomic.Pointer[error] }

// dialer wraps dial to record in r its errors that are not temporary.
func (r *refusal) dialer(dial func(context.Context, string) (net.Conn, error)) func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		conn, err := dial(ctx, addr)
		if err != nil && !temporary(err) {
			r.err.CompareAndSwap(nil, &err)
		}
		return conn, err
	}
}

// temporary reports whether retrying might cure a dial error, by grpc-go's
// test, which k6 applies to connect: an error that says it is temporary
// or a timeout, or one that says neither.
func temporary(err error) bool {
	switch e := err.(type) {
	case interface{ Temporary() bool }:
		return e.Temporary()
	case interface{ Timeout() bool }:
		return e.Timeout()
	}
	return true
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
