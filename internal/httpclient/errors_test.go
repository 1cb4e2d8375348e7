package httpclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/metronome-load/metronome/internal/dialer"
)

// TestErrorText checks the shortening of network errors to k6's form.
func TestErrorText(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
	cases := []struct {
		err  error
		text string
		code int
	}{
		{&url.Error{Op: "Get", URL: "http://x/", Err: &net.OpError{Op: "dial", Net: "tcp", Addr: addr,
			Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}, "dial: connection refused", 1212},
		{&net.OpError{Op: "dial", Net: "tcp", Addr: addr, Err: os.NewSyscallError("connect", syscall.ECONNRESET)},
			"dial: connection reset by peer", 1220},
		{&net.OpError{Op: "read", Net: "tcp", Source: addr, Addr: addr, Err: os.NewSyscallError("read", syscall.ECONNRESET)},
			"read: connection reset by peer", 1220},
		{&net.OpError{Op: "write", Net: "tcp", Source: addr, Addr: addr, Err: os.NewSyscallError("write", syscall.EPIPE)},
			"write: broken pipe", 1201},
		{&net.OpError{Op: "dial", Net: "tcp", Source: addr, Addr: addr, Err: os.NewSyscallError("bind", syscall.EADDRNOTAVAIL)},
			fmt.Sprintf("dial: unknown errno %d error with msg `cannot assign requested address`", int(syscall.EADDRNOTAVAIL)), 1213},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}},
			"lookup x.invalid: no such host", 1101},
		{io.ErrUnexpectedEOF, "unexpected EOF", 1000},
		// TLS verification failures, as k6 names them.
		{&url.Error{Op: "Get", URL: "https://x/", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}},
			"x509: unknown authority", 1310},
		{&tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: &x509.Certificate{}, Host: "127.0.0.1"}},
			"x509: certificate doesn't match hostname", 1311},
		{&tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Cert: &x509.Certificate{}, Reason: x509.Expired, Detail: "current time A is after B"}},
			"x509: certificate has expired or is not yet valid: current time A is after B", 1000},
		// An alert from the server is a network error of no TCP network.
		{&net.OpError{Op: "remote error", Err: errors.New("tls: protocol version not supported")},
			"remote error: tls: protocol version not supported", 1010},
		// Other TLS errors are k6's generic code, never 1300.
		{errors.New("tls: server chose an unconfigured cipher suite"), "tls: server chose an unconfigured cipher suite", 1000},
		{refusal(`unsupported protocol scheme "ftp"`), `unsupported protocol scheme "ftp"`, 1000},
		// A failed connection to a proxy is reported whole as a TCP
		// error, as k6 does, whatever it wraps; a system call's error of
		// its own is classified as any.
		{&url.Error{Op: "Get", URL: "http://x/", Err: &net.OpError{Op: "proxyconnect", Net: "tcp",
			Err: &dialer.BlacklistedError{IP: net.IPv4(127, 0, 0, 1), Range: &net.IPNet{IP: net.IPv4(127, 0, 0, 0), Mask: net.CIDRMask(8, 32)}}}},
			"proxyconnect tcp: IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)", 1200},
		{&net.OpError{Op: "proxyconnect", Net: "tcp", Err: &net.OpError{Op: "dial", Net: "tcp", Addr: addr, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}},
			"proxyconnect tcp: dial tcp 127.0.0.1:40000: connect: connection refused", 1200},
		{&net.OpError{Op: "proxyconnect", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)},
			"proxyconnect: connection reset by peer", 1220},
	}
	for _, c := range cases {
		if got := ErrorText(c.err); got != c.text {
			t.Errorf("%v: text %q, want %q", c.err, got, c.text)
		}
		if got := errorCode(c.err); got != c.code {
			t.Errorf("%v: code %d, want %d", c.err, got, c.code)
		}
	}
}

func TestErrorCodes(t *testing.T) {
	cases := []struct {
		err  error
		code int
	}{
		{&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, 1101},
		{&net.DNSError{Err: "server misbehaving", Name: "x"}, 1100},
		{&net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, 1211},
		{&net.OpError{Op: "read", Net: "tcp", Err: fmt.Errorf("x")}, 1200},
		{&net.OpError{Op: "dial", Net: "unix", Err: fmt.Errorf("x")}, 1010},
		{fmt.Errorf("http2: server sent GOAWAY and closed the connection"), 1610},
		{&decompressError{err: fmt.Errorf("bad")}, 1701},
		{fmt.Errorf("something else"), 1000},
	}
	for _, c := range cases {
		if got := errorCode(c.err); got != c.code {
			t.Errorf("%v: code %d, want %d", c.err, got, c.code)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }
