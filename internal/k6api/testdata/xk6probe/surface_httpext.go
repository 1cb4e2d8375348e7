package probe

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/sobek"

	k6http "go.k6.io/k6/v2/js/modules/k6/http"
	"go.k6.io/k6/v2/js/modulestest"
	"go.k6.io/k6/v2/lib/netext/httpext"
)

// send sends a request with k6's HTTP engine as xk6-loki does: an
// http.Request, a URL named name, a body, the VU's current tags with
// probe=send added, a response callback taking 2xx, and jar (a k6/http
// jar object, or null) as the active jar, its body compressed with the
// comma-separated compressions ("" for none). It says what came back.
func (p *probe) send(method, rawURL, name, body string, jar sobek.Value, compressions string) (string, error) {
	st := p.vu.State()
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("X-Probe", "send")
	u, err := httpext.NewURL(rawURL, name)
	if err != nil {
		return "", err
	}
	tm := st.Tags.GetCurrentValues()
	tm.SetTag("probe", "send")
	preq := &httpext.ParsedHTTPRequest{
		URL:              &u,
		Req:              req,
		Body:             bytes.NewBufferString(body),
		Throw:            st.Options.Throw.Bool,
		Redirects:        st.Options.MaxRedirects,
		Timeout:          5 * time.Second,
		Auth:             "",
		ResponseType:     httpext.ResponseTypeText,
		ResponseCallback: func(status int) bool { return status/100 == 2 },
		TagsAndMeta:      tm,
	}
	for _, c := range strings.Split(compressions, ",") {
		switch strings.TrimSpace(c) {
		case "gzip":
			preq.Compressions = append(preq.Compressions, httpext.CompressionTypeGzip)
		case "deflate":
			preq.Compressions = append(preq.Compressions, httpext.CompressionTypeDeflate)
		case "br":
			preq.Compressions = append(preq.Compressions, httpext.CompressionTypeBr)
		case "zstd":
			preq.Compressions = append(preq.Compressions, httpext.CompressionTypeZstd)
		}
	}
	if cj, ok := jarOf(jar); ok {
		preq.ActiveJar = cj.Jar
	}
	sent := fmt.Sprintf("sent %s %s %d %s auth=%q throw=%v type=%d redirects=%d",
		preq.Req.Method, preq.URL.Name, preq.Body.Len(), preq.Timeout, preq.Auth, preq.Throw, preq.ResponseType, preq.Redirects.Int64)
	res, err := httpext.MakeRequest(p.vu.Context(), st, preq)
	if err != nil {
		return "", err
	}
	var r *httpext.Response = res
	empty := httpext.NewResponse()
	return fmt.Sprintf("%s: status=%d body=%q seen=%s error=%q empty=%d,%v request=%q,%q", sent,
		r.Status, r.Body, r.Headers["X-Seen"], r.Error, len(empty.Headers), empty.Body,
		r.Request.Body, strings.Join(r.Request.Headers["Content-Encoding"], ",")), nil
}

// jarOf is the Go side of a k6/http cookie jar object, as xk6-sse reads
// params.jar.
func jarOf(v sobek.Value) (*k6http.CookieJar, bool) {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil, false
	}
	cj, ok := v.Export().(*k6http.CookieJar)
	return cj, ok && cj.Jar != nil
}

// jarCookies stores the cookie fromgo=1 for rawURL in the jar object v
// through its Go jar, and lists the cookies that jar has for rawURL.
func (p *probe) jarCookies(v sobek.Value, rawURL string) (string, error) {
	cj, ok := jarOf(v)
	if !ok {
		return "", fmt.Errorf("not a k6/http cookie jar with a Jar: %T", v.Export())
	}
	var jar *cookiejar.Jar = cj.Jar
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	jar.SetCookies(u, []*http.Cookie{{Name: "fromgo", Value: "1", Path: "/"}})
	var names []string
	for _, c := range jar.Cookies(u) {
		names = append(names, c.Name+"="+c.Value)
	}
	sort.Strings(names)
	return strings.Join(names, ","), nil
}

// An extension's tests make a runtime with a VU (xk6-sql's sqltest): the
// name is here so that the offline build fails if the layer drops it.
var _ func(testing.TB) *modulestest.Runtime = modulestest.NewRuntime
