package httpclient

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/Azure/go-ntlmssp"
)

// NTLM authentication, for params.auth "ntlm", with the messages of
// github.com/Azure/go-ntlmssp (NTLMv2). The hops are those k6 v2.2.0
// makes, each measured: the request without credentials; if the server
// answers 401 offering NTLM and the URL has credentials, again with a
// NEGOTIATE message; on the 401 carrying the CHALLENGE, once more with the
// AUTHENTICATE message. As in k6 the first 401 counts as an expected
// response and the second does not. The hops run one after the other on
// the VU's client, so they reuse its kept-alive connection, which NTLM
// authenticates.

// ntlmStep is where an NTLM handshake is.
type ntlmStep uint8

const (
	ntlmStart ntlmStep = iota
	ntlmNegotiated
	ntlmDone
)

// ntlmOffer returns the scheme ("NTLM" or "Negotiate") and token of a
// response's NTLM challenge; ok is false when it offers neither.
func ntlmOffer(resp *http.Response) (scheme string, token []byte, ok bool) {
	for _, v := range resp.Header.Values("Www-Authenticate") {
		s, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(s, "NTLM") && !strings.EqualFold(s, "Negotiate") {
			continue
		}
		tok, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
		if err != nil {
			tok = nil
		}
		return s, tok, true
	}
	return "", nil, false
}

// ntlmNext is the Authorization value of the handshake's next hop after a
// 401 at step, and the step after it; ok is false when the handshake ends
// here (no credentials, no NTLM offered, a malformed challenge).
func ntlmNext(resp *http.Response, step ntlmStep, u *Target) (string, ntlmStep, bool) {
	user, pass := credentials(u)
	scheme, token, offered := ntlmOffer(resp)
	if !offered || (user == "" && pass == "") {
		return "", ntlmDone, false
	}
	switch step {
	case ntlmStart:
		msg, err := ntlmssp.NewNegotiateMessage("", "")
		if err != nil {
			return "", ntlmDone, false
		}
		return scheme + " " + base64.StdEncoding.EncodeToString(msg), ntlmNegotiated, true
	case ntlmNegotiated:
		if len(token) == 0 {
			return "", ntlmDone, false
		}
		msg, err := ntlmssp.NewAuthenticateMessage(token, user, pass, nil)
		if err != nil {
			return "", ntlmDone, false
		}
		return scheme + " " + base64.StdEncoding.EncodeToString(msg), ntlmDone, true
	}
	return "", ntlmDone, false
}

// withoutCredentials is u without the Basic credentials of its URL: an
// NTLM request's first hop goes out anonymous, as in k6.
func withoutCredentials(u *Target) *Target {
	if u.Auth == "" {
		return u
	}
	return &Target{URL: u.URL, Clean: u.Clean, Full: u.Clean, Tag: u.Clean}
}
