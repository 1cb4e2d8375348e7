//go:build unix

package http1

import (
	"errors"
	"net"
	"syscall"
)

// quiet reports whether nothing has come on idle connection c since its
// last answer: no byte, no close, no reset. net/http's Transport reads
// every idle connection in the background and drops one on which anything
// arrives (an unsolicited answer, a 408 sent before the server closes it,
// stray bytes), so that nothing is taken for the answer to a request not
// yet sent; this asks the kernel instead, with one non-blocking peek at
// the socket just before the connection is reused. A connection without a
// socket of its own is checked only when check is set.
func (c *conn) quiet(check bool) bool {
	if c.br.Buffered() > 0 {
		return false
	}
	if c.raw == nil {
		return !check || alive(c)
	}
	if c.peek == nil {
		c.peek = c.peekSocket
	}
	c.still = false
	return c.raw.Control(c.peek) == nil && c.still
}

// peekSocket is quiet's look at the socket: a peek that neither waits nor
// consumes. Nothing to read (EAGAIN) is the only answer of a live, idle
// connection; a byte, an EOF or an error mean it is done.
func (c *conn) peekSocket(fd uintptr) {
	n, _, err := syscall.Recvfrom(int(fd), c.one[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	c.still = n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
}

// peekAlive peeks at the socket without blocking or consuming anything:
// nothing to read means the peer is still there.
func peekAlive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	live := false
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		live = n < 0 && (errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK))
		return true
	})
	return err == nil && live
}
