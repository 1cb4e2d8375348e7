package httpclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/metronome-load/metronome/internal/dialer"
)

// k6's error codes (response.error_code and the error_code tag).
const (
	codeGeneric          = 1000
	codeNonTCPNetwork    = 1010
	codeInvalidURL       = 1020
	codeRequestTimeout   = 1050
	codeDNS              = 1100
	codeNoSuchHost       = 1101
	codeBlacklistedIP    = 1110
	codeBlockedHostname  = 1111
	codeTCP              = 1200
	codeBrokenPipe       = 1201
	codeUnknownErrno     = 1202
	codeDial             = 1210
	codeDialTimeout      = 1211
	codeConnRefused      = 1212
	codeDialUnknownErrno = 1213
	codeConnReset        = 1220
	codeTLSHeader        = 1301
	codeUnknownAuthority = 1310
	codeHostnameMismatch = 1311
	codeHTTP2GoAway      = 1610
	codeHTTP2Stream      = 1630
	codeHTTP2Connection  = 1650
	codeDecompress       = 1701
)

// errorCode classifies a transport error with k6's codes. k6 v2.2.0 never
// gives TLS's general code 1300: a certificate that failed verification
// for a reason other than its issuer or its host name (expired, not yet
// valid) is 1000, an alert from the server 1010.
func errorCode(err error) int {
	var (
		rf  refusal
		ue  *url.Error
		dns *net.DNSError
		op  *net.OpError
		ua  x509.UnknownAuthorityError
		hn  x509.HostnameError
		rh  tls.RecordHeaderError
		de  *decompressError
		bl  *dialer.BlacklistedError
		bh  *dialer.BlockedError
	)
	if _, ok := proxyFailure(err); ok {
		return codeTCP
	}
	switch {
	case errors.As(err, &rf):
		return codeGeneric
	case errors.As(err, &bl):
		return codeBlacklistedIP
	case errors.As(err, &bh):
		return codeBlockedHostname
	case errors.As(err, &de):
		return codeDecompress
	case errors.As(err, &ue) && ue.Op == "parse":
		return codeInvalidURL
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return codeNoSuchHost
		}
		return codeDNS
	case errors.As(err, &ua):
		return codeUnknownAuthority
	case errors.As(err, &hn):
		return codeHostnameMismatch
	case errors.As(err, &rh):
		return codeTLSHeader
	case errors.As(err, &op):
		return opErrorCode(op)
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "http2: server sent GOAWAY"):
		return codeHTTP2GoAway
	case strings.Contains(msg, "stream error"):
		return codeHTTP2Stream
	case strings.Contains(msg, "connection error"):
		return codeHTTP2Connection
	case errors.Is(err, syscall.EPIPE):
		return codeBrokenPipe
	case errors.Is(err, syscall.ECONNRESET):
		return codeConnReset
	}
	return codeGeneric
}

// proxyFailure returns the error of a failed connection to a proxy when
// err is one that k6 reports whole, as a TCP error (1200), whatever it
// wraps: a refused dial, the proxy's address in a blacklisted range. One
// of a system call (a reset, a broken pipe) is classified as any other.
func proxyFailure(err error) (*net.OpError, bool) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "proxyconnect" {
		return nil, false
	}
	_, syscallErr := op.Err.(*os.SyscallError)
	return op, !syscallErr
}

// opErrorCode classifies a network error. One of no TCP network is
// k6's 1010: among them the TLS alerts ("remote error: tls: …"), which
// carry no network at all.
func opErrorCode(op *net.OpError) int {
	if op.Net != "tcp" && op.Net != "tcp6" {
		return codeNonTCPNetwork
	}
	var errno syscall.Errno
	hasErrno := errors.As(op.Err, &errno)
	// A reset is a reset in any phase, dialling included (k6 agrees).
	if errors.Is(op.Err, syscall.ECONNRESET) {
		return codeConnReset
	}
	if op.Op == "dial" {
		switch {
		case op.Timeout():
			return codeDialTimeout
		case errors.Is(op.Err, syscall.ECONNREFUSED):
			return codeConnRefused
		case hasErrno:
			return codeDialUnknownErrno
		}
		return codeDial
	}
	switch {
	case errors.Is(op.Err, syscall.EPIPE):
		return codeBrokenPipe
	case errors.Is(op.Err, syscall.ECONNRESET):
		return codeConnReset
	case hasErrno:
		return codeUnknownErrno
	}
	var se *os.SyscallError
	if errors.As(op.Err, &se) {
		return codeUnknownErrno
	}
	return codeTCP
}

// ErrorText is the message a failed request shows in response.error and
// the error tag. A network error is shortened to its operation and cause,
// as k6 does ("read: connection reset by peer", "dial: connection
// refused"): the addresses it carries, the local port above all, would
// make every failed request a time series of its own. A certificate that
// failed verification reads as in k6: "x509: unknown authority", "x509:
// certificate doesn't match hostname", else x509's own message.
func ErrorText(err error) string {
	var op *net.OpError
	var dns *net.DNSError
	var bl *dialer.BlacklistedError
	var bh *dialer.BlockedError
	var cv *tls.CertificateVerificationError
	if op, ok := proxyFailure(err); ok {
		return op.Error()
	}
	var de *decompressError
	if errors.As(err, &de) && k6Listed(de.err) {
		// k6 wraps its listed decoder errors twice here (k6Listed).
		return "error decompressing response body (" + de.Error() + ")"
	}
	// A refusal by the network options reads as k6's, without the address
	// (which the Request Failed warning keeps).
	switch {
	case errors.As(err, &bl):
		return "ip is blacklisted"
	case errors.As(err, &bh):
		return "hostname is blocked"
	case errors.As(err, &cv) && cv.Err != nil:
		var ua x509.UnknownAuthorityError
		var hn x509.HostnameError
		switch {
		case errors.As(cv.Err, &ua):
			return "x509: unknown authority"
		case errors.As(cv.Err, &hn):
			return "x509: certificate doesn't match hostname"
		}
		return cv.Err.Error()
	}
	if errors.As(err, &dns) {
		return dns.Error()
	}
	var errno syscall.Errno
	if errors.As(err, &op) && opErrorCode(op) == codeDialUnknownErrno && errors.As(op.Err, &errno) {
		// A local address of localIPs this machine lacks, say: k6's words.
		return fmt.Sprintf("dial: unknown errno %d error with msg `%s`", int(errno), errno.Error())
	}
	if errors.As(err, &op) && op.Op != "" && op.Err != nil {
		return op.Op + ": " + causeText(op.Err)
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Op != "parse" {
		return ue.Err.Error()
	}
	return err.Error()
}

// causeText is the innermost message of a network error: the system
// call's error without the call's name, or the error itself.
func causeText(err error) string {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	return err.Error()
}

// ErrorDetail is the full message of a failed request, addresses
// included, for the log line that reports it.
func ErrorDetail(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Op != "parse" {
		return ue.Err.Error()
	}
	return err.Error()
}

// ThrowText is the message of the exception a failed request throws when
// the script asked for one (the throw option or param), and of its Request
// Failed warning: Go's client error, which k6 passes on, `Get "URL":
// cause`, with the method of the request the script made, the URL of the
// hop that failed and its password replaced by ***; for an error met
// while reading the body, which k6 reads itself, the cause alone.
func ThrowText(method string, h *Hop) string {
	if h.InBody {
		return ErrorDetail(h.Err)
	}
	return fmt.Sprintf("%s %q: %s", errorOp(method), withoutPassword(h.URL.Full), ErrorDetail(h.Err))
}

// errorOp is how Go's client names a method in its errors: "Get", "Post".
func errorOp(method string) string {
	if method == "" {
		return "Get"
	}
	lower := strings.ToLower(method)
	for i := 0; i < len(lower); i++ {
		if lower[i] >= 0x80 {
			return method
		}
	}
	return method[:1] + lower[1:]
}

// withoutPassword is the URL u with its password, if any, as ***.
func withoutPassword(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	if _, ok := p.User.Password(); !ok {
		return u
	}
	return strings.Replace(p.String(), p.User.String()+"@", p.User.Username()+":***@", 1)
}
