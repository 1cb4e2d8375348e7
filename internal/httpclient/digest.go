package httpclient

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"net/http"
	"strings"
)

// Digest access authentication (RFC 7616), for params.auth "digest": the
// request goes out first with the URL's credentials as Basic, as k6 sends
// it; a 401 whose WWW-Authenticate offers Digest is answered once with a
// second hop carrying the digest. Both hops are measured, and the 401 of
// the handshake counts as an expected response, as in k6.

// digestChallenge is the Digest challenge of a response, nil when it
// offers none.
func digestChallenge(resp *http.Response) map[string]string {
	for _, v := range resp.Header.Values("Www-Authenticate") {
		scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
		if strings.EqualFold(scheme, "Digest") {
			return authParams(rest)
		}
	}
	return nil
}

// authParams parses the comma-separated name=value and name="value"
// pairs of an authentication challenge.
func authParams(s string) map[string]string {
	m := map[string]string{}
	for s != "" {
		s = strings.TrimLeft(s, " \t,")
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		name = strings.ToLower(strings.TrimSpace(name))
		rest = strings.TrimLeft(rest, " \t")
		var val string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
				}
				b.WriteByte(rest[i])
			}
			val, s = b.String(), rest[min(i+1, len(rest)):]
		} else {
			val, s, _ = strings.Cut(rest, ",")
			val = strings.TrimSpace(val)
		}
		m[name] = val
	}
	return m
}

// credentials are the user and password of a target's URL, read back from
// its Basic Authorization value ("" and "" without any).
func credentials(t *Target) (user, pass string) {
	enc, ok := strings.CutPrefix(t.Auth, "Basic ")
	if !ok {
		return "", ""
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", ""
	}
	user, pass, _ = strings.Cut(string(b), ":")
	return user, pass
}

// newCnonce is a fresh client nonce.
func newCnonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// digestAuthorization answers challenge for a request: the Authorization
// header value, or false when the challenge uses an algorithm or quality
// of protection this does not speak.
func digestAuthorization(challenge map[string]string, u *Target, method, body, cnonce string) (string, bool) {
	alg := challenge["algorithm"]
	if alg == "" {
		alg = "MD5"
	}
	var newHash func() hash.Hash
	switch strings.ToUpper(strings.TrimSuffix(strings.ToUpper(alg), "-SESS")) {
	case "MD5":
		newHash = md5.New
	case "SHA-256":
		newHash = sha256.New
	default:
		return "", false
	}
	h := func(s string) string {
		x := newHash()
		x.Write([]byte(s))
		return hex.EncodeToString(x.Sum(nil))
	}
	qop := ""
	if q := challenge["qop"]; q != "" {
		for _, o := range strings.Split(q, ",") {
			switch o = strings.TrimSpace(o); o {
			case "auth":
				qop = o
			case "auth-int":
				if qop == "" {
					qop = o
				}
			}
		}
		if qop == "" {
			return "", false
		}
	}
	user, pass := credentials(u)
	realm, nonce := challenge["realm"], challenge["nonce"]
	const nc = "00000001"
	uri := u.URL.RequestURI()

	ha1 := h(user + ":" + realm + ":" + pass)
	if strings.HasSuffix(strings.ToUpper(alg), "-SESS") {
		ha1 = h(ha1 + ":" + nonce + ":" + cnonce)
	}
	ha2 := h(method + ":" + uri)
	if qop == "auth-int" {
		ha2 = h(method + ":" + uri + ":" + h(body))
	}
	var response string
	if qop == "" {
		response = h(ha1 + ":" + nonce + ":" + ha2)
	} else {
		response = h(ha1 + ":" + nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + ha2)
	}

	var b strings.Builder
	b.WriteString(`Digest username="` + user + `", realm="` + realm + `", nonce="` + nonce + `", uri="` + uri + `"`)
	if qop != "" {
		b.WriteString(`, cnonce="` + cnonce + `", nc=` + nc + `, qop=` + qop)
	}
	b.WriteString(`, response="` + response + `"`)
	if o, ok := challenge["opaque"]; ok {
		b.WriteString(`, opaque="` + o + `"`)
	}
	b.WriteString(`, algorithm="` + alg + `"`)
	return b.String(), true
}

// withAuthorization returns a copy of h with the Authorization header set.
func withAuthorization(h http.Header, v string) http.Header {
	h = h.Clone()
	if h == nil {
		h = make(http.Header, 1)
	}
	h["Authorization"] = []string{v}
	return h
}
