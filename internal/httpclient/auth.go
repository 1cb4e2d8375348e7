package httpclient

import (
	"net/http"
)

// handshake is where a request's digest or NTLM authentication is (see
// digest.go and ntlm.go): Do asks it what to do with each 401.
type handshake struct {
	digested bool
	ntlm     ntlmStep
}

// answer decides what follows a 401 to a request with params.auth
// "digest" or "ntlm": the Authorization value of one more hop, or false
// when the 401 is the response. It marks h as the handshake's challenge
// when k6 counts it as an expected response.
func (a *handshake) answer(r *Request, h *Hop, resp *http.Response, u *Target, method, body string) (string, bool) {
	switch {
	case r.Digest && !a.digested:
		ch := digestChallenge(resp)
		if ch == nil {
			return "", false
		}
		authz, ok := digestAuthorization(ch, u, method, body, newCnonce())
		if !ok {
			return "", false
		}
		a.digested, h.Challenge = true, true
		return authz, true
	case r.NTLM && a.ntlm != ntlmDone:
		h.Challenge = a.ntlm == ntlmStart
		authz, step, ok := ntlmNext(resp, a.ntlm, u)
		a.ntlm = step
		return authz, ok
	}
	return "", false
}
