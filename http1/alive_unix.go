//go:build unix

package http1

import (
	"errors"
	"net"
	"syscall"
)

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
