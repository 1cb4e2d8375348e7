package dialer

import (
	"context"
	"net"
	"strconv"
	"testing"
)

// BenchmarkDial measures one connection to a loopback listener by address
// and by a name from /etc/hosts (localhost), the cost every new connection
// of a test pays in the dialer.
func BenchmarkDial(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	for _, addr := range []string{"127.0.0.1:" + port, "localhost:" + port} {
		b.Run(addr[:9], func(b *testing.B) {
			d := New(net.Dialer{Resolver: noDNS}, nil, nil, nil)
			b.ReportAllocs()
			for b.Loop() {
				c, err := d.DialContext(context.Background(), "tcp", addr)
				if err != nil {
					b.Fatal(err)
				}
				_ = c.Close()
			}
		})
	}
}
