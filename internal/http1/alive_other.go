//go:build !unix

package http1

import (
	"errors"
	"net"
	"os"
	"time"
)

// quiet reports whether nothing has come on idle connection c since its
// last answer, as far as can be told without waiting: bytes already read
// past the answer, or, when check is set, what peekAlive sees. Without a
// non-blocking peek at the socket, a connection idle for less than
// probeAfter is not checked.
func (c *conn) quiet(check bool) bool {
	return c.br.Buffered() == 0 && (!check || alive(c))
}

// peekAlive waits a moment for something to read: a live idle connection
// has nothing, a closed one an EOF. Peeking consumes nothing that matters,
// since an idle connection must not have received data.
func peekAlive(c net.Conn) bool {
	if err := c.SetReadDeadline(time.Now().Add(time.Millisecond)); err != nil {
		return false
	}
	var b [1]byte
	n, err := c.Read(b[:])
	if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	return c.SetReadDeadline(time.Time{}) == nil
}
