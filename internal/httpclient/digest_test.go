package httpclient

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// The worked examples of RFC 7616 section 3.9.1, MD5 and SHA-256.
func TestDigestAuthorizationRFC7616(t *testing.T) {
	u, _ := url.Parse("http://Mufasa:Circle%20of%20Life@www.example.org/dir/index.html")
	tgt := targetOf(u)
	for _, tc := range []struct{ alg, response string }{
		{"MD5", "8ca523f5e9506fed4657c9700eebdbec"},
		{"SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"},
	} {
		ch := authParams(fmt.Sprintf(`realm="http-auth@example.org", qop="auth, auth-int", algorithm=%s, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`, tc.alg))
		got, ok := digestAuthorization(ch, tgt, "GET", "", "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
		if !ok {
			t.Fatalf("%s: challenge refused", tc.alg)
		}
		for _, want := range []string{`username="Mufasa"`, `uri="/dir/index.html"`, `qop=auth,`, `nc=00000001`, `response="` + tc.response + `"`, `opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`, `algorithm="` + tc.alg + `"`} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: %s lacks %s", tc.alg, got, want)
			}
		}
	}
	if _, ok := digestAuthorization(authParams(`realm="r", nonce="n", algorithm=SHA-512-256`), tgt, "GET", "", "c"); ok {
		t.Error("an unknown algorithm was answered")
	}
}
