package secrets

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// The url source's grammar and the sentences k6 v2.2.0 refuses a
// configuration with (each checked against k6's own output).
func TestURLConfigErrors(t *testing.T) {
	bad := writeFile(t, "bad.json", "{nope")
	for spec, want := range map[string]string{
		"url":                       "urlTemplate is required",
		"url=foo":                   `invalid config format "foo", expected key=value`,
		"url=urlTemplate=http://x/": "urlTemplate must contain {key} placeholder",
		"url=urlTemplate=/a/{key}":  "urlTemplate must be an absolute URL with a scheme (e.g., https://...)",
		"url=urlTemplate=http://x/{key},maxRetries=abc":             "invalid maxRetries: expected integer",
		"url=urlTemplate=http://x/{key},timeout=0s":                 "timeout must be greater than 0",
		"url=urlTemplate=http://x/{key},timeout=5":                  `invalid timeout: time: missing unit in duration "5"`,
		"url=urlTemplate=http://x/{key},retryBackoff=0s":            "retryBackoff must be greater than 0",
		"url=urlTemplate=http://x/{key},requestsPerMinuteLimit=0":   "requestsPerMinuteLimit must be greater than 0",
		"url=urlTemplate=http://x/{key},requestsBurst=0":            "requestsBurst must be greater than 0",
		"url=urlTemplate=http://x/{key},maxRetries=-1":              "maxRetries must be non-negative",
		"url=urlTemplate=http://x/{key},bogus=1":                    `unknown configuration key: "bogus"`,
		"url=urlTemplate=http://x/{key},config=/nonexistent/u.json": "failed to open config file: open /nonexistent/u.json: no such file or directory",
		"url=urlTemplate=http://x/{key},config=" + bad:              "failed to parse JSON config: invalid character 'n' looking for beginning of object key string",
	} {
		_, err := Parse([]string{spec})
		if want = "missing or invalid config: " + want; err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v\nwant %q", spec, err, want)
		}
	}
}

// Layers lie over each other as in k6: defaults, K6_SECRET_SOURCE_URL_*,
// the config file, the flag's keys (whatever their order); a layer's
// headers replace the ones below as a whole.
func TestURLConfigLayers(t *testing.T) {
	file := writeFile(t, "u.json", `{"urlTemplate": "http://file/{key}", "method": "POST", "headers": {"X-File": "1"},
		"timeout": "1m", "retryBackoff": 250, "maxRetries": 7, "responsePath": "a.b"}`)
	env := map[string]string{
		"K6_SECRET_SOURCE_URL_URL_TEMPLATE":              "http://env/{key}",
		"K6_SECRET_SOURCE_URL_HEADER_AUTHORIZATION":      "t",
		"K6_SECRET_SOURCE_URL_REQUESTS_PER_MINUTE_LIMIT": "60",
		"K6_SECRET_SOURCE_URL_TIMEOUT":                   "2s",
		"K6_SECRET_SOURCE_URL_METHOD":                    "",
	}
	src, err := newURLSource("requestsBurst=3,config="+file+",urlTemplate=http://flag/{key}", env)
	if err != nil {
		t.Fatal(err)
	}
	want := urlConfig{URLTemplate: "http://flag/{key}", Headers: map[string]string{"X-File": "1"}, Method: "POST",
		ResponsePath: "a.b", RequestsPerMinute: 60, Burst: 3, MaxRetries: 7, Timeout: time.Minute, RetryBackoff: 250 * time.Millisecond}
	if !reflect.DeepEqual(src.conf, want) {
		t.Errorf("config %+v\nwant   %+v", src.conf, want)
	}
	src, err = newURLSource("", env)
	if err != nil {
		t.Fatal(err)
	}
	want = urlConfig{URLTemplate: "http://env/{key}", Headers: map[string]string{"AUTHORIZATION": "t"}, Method: "GET",
		RequestsPerMinute: 60, Burst: 10, MaxRetries: 3, Timeout: 2 * time.Second, RetryBackoff: time.Second}
	if !reflect.DeepEqual(src.conf, want) {
		t.Errorf("env config %+v\nwant       %+v", src.conf, want)
	}
}

// secretTarget is a loopback secret server whose answers the test sets:
// status and body by path; it counts the requests of each path.
type secretTarget struct {
	*httptest.Server
	mu     sync.Mutex
	hits   map[string]int
	answer func(r *http.Request, hit int) (int, string)
	header http.Header
}

func newSecretTarget(t *testing.T, answer func(r *http.Request, hit int) (int, string)) *secretTarget {
	st := &secretTarget{hits: map[string]int{}, answer: answer}
	st.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st.mu.Lock()
		st.hits[r.URL.Path]++
		n := st.hits[r.URL.Path]
		st.header = r.Header.Clone()
		st.mu.Unlock()
		code, body := st.answer(r, n)
		w.WriteHeader(code)
		io.WriteString(w, body)
	}))
	t.Cleanup(st.Close)
	return st
}

func (st *secretTarget) count(path string) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.hits[path]
}

// fakeTime replaces a source's clock and waits: sleeps advance the clock
// and are recorded; the jitter is fixed.
func fakeTime(s *urlSource, jitter time.Duration) *[]time.Duration {
	now := time.Unix(1000, 0)
	var slept []time.Duration
	s.now = func() time.Time { return now }
	s.sleep = func(d time.Duration) {
		slept = append(slept, d)
		now = now.Add(d)
	}
	s.jitter = func() time.Duration { return jitter }
	return &slept
}

// A transient failure (5xx, 429, a refused connection) is tried again
// maxRetries times, waiting floor(backoff^n) whole seconds plus the
// jitter before the nth retry; a 4xx is not; a success is kept and a
// failure is not.
func TestURLRetries(t *testing.T) {
	st := newSecretTarget(t, func(r *http.Request, hit int) (int, string) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/flaky/") && hit > 2:
			return 200, "ok-" + strings.TrimPrefix(r.URL.Path, "/flaky/")
		case strings.HasPrefix(r.URL.Path, "/flaky/"), r.URL.Path == "/5xx":
			return 503, ""
		case r.URL.Path == "/429":
			return 429, ""
		}
		return 404, ""
	})
	for _, c := range []struct {
		backoff    string
		key        string
		want       string
		requests   int
		waits      []time.Duration
		retryLater bool
	}{
		{"2s", "5xx", "status code 503: failed to get secret", 4,
			[]time.Duration{2*time.Second + 300*time.Millisecond, 4*time.Second + 300*time.Millisecond, 8*time.Second + 300*time.Millisecond}, false},
		{"1500ms", "429", "status code 429: failed to get secret", 4,
			[]time.Duration{1*time.Second + 300*time.Millisecond, 2*time.Second + 300*time.Millisecond, 3*time.Second + 300*time.Millisecond}, false},
		{"500ms", "404", "status code 404: failed to get secret", 1, nil, false},
		{"500ms", "flaky/a", "ok-a", 3, []time.Duration{300 * time.Millisecond, 300 * time.Millisecond}, true},
	} {
		src, err := newURLSource(fmt.Sprintf("urlTemplate=%s/{key},retryBackoff=%s", st.URL, c.backoff), nil)
		if err != nil {
			t.Fatal(err)
		}
		slept := fakeTime(src, 300*time.Millisecond)
		v, err := src.Get(c.key)
		got := v
		if err != nil {
			got = err.Error()
		}
		waits := (*slept)[1:] // the first is the rate limit's, 0
		if (*slept)[0] != 0 || got != c.want || st.count("/"+c.key) != c.requests || fmt.Sprint(waits) != fmt.Sprint(c.waits) {
			t.Errorf("backoff %s, %s: got %q after %d requests, waits %v; want %q, %d, %v",
				c.backoff, c.key, got, st.count("/"+c.key), *slept, c.want, c.requests, c.waits)
		}
		// A value is kept; a failure is tried anew.
		before := st.count("/" + c.key)
		_, _ = src.Get(c.key)
		if again := st.count("/"+c.key) - before; (again == 0) != c.retryLater {
			t.Errorf("%s: a second get made %d requests", c.key, again)
		}
	}
}

// The limit of requests per minute is a token bucket of requestsBurst:
// the burst goes at once, the next request waits its turn.
func TestURLRateLimit(t *testing.T) {
	st := newSecretTarget(t, func(*http.Request, int) (int, string) { return 200, "v" })
	src, err := newURLSource("urlTemplate="+st.URL+"/{key},requestsPerMinuteLimit=30,requestsBurst=2", nil)
	if err != nil {
		t.Fatal(err)
	}
	slept := fakeTime(src, 0)
	for _, k := range []string{"a", "b", "c", "a", "d"} {
		if _, err := src.Get(k); err != nil {
			t.Fatal(err)
		}
	}
	// a, b: the burst; c waits 2 s (30 a minute); a again is kept and
	// waits for nothing; d 2 s more.
	if want := []time.Duration{0, 0, 2 * time.Second, 2 * time.Second}; !reflect.DeepEqual(*slept, want) {
		t.Errorf("waits %v, want %v", *slept, want)
	}
}

// The body is the secret, or the string at responsePath; the headers and
// the method are sent; what k6 refuses to take a secret from is refused in
// k6's words.
func TestURLResponses(t *testing.T) {
	st := newSecretTarget(t, func(r *http.Request, _ int) (int, string) {
		switch r.URL.Path {
		case "/json":
			return 200, `{"data": {"v": "s3cret", "n": 1, "o": {"a": 1}, "t": true}}`
		case "/big":
			return 200, strings.Repeat("b", maxSecretSize+1)
		case "/method":
			return 200, r.Method
		}
		return 200, "body " + r.URL.Path
	})
	for _, c := range []struct{ conf, key, want string }{
		{"", "plain", "body /plain"},
		{",responsePath=data.v", "json", "s3cret"},
		{",responsePath=data.n", "json", `failed to extract secret: secret value at path "data.n" is not a string (got Number)`},
		{",responsePath=data.o", "json", `failed to extract secret: secret value at path "data.o" is not a string (got JSON)`},
		{",responsePath=data.t", "json", `failed to extract secret: secret value at path "data.t" is not a string (got True)`},
		{",responsePath=data.x", "json", `failed to extract secret: path "data.x" not found in response`},
		{"", "big", "failed to extract secret: secret response exceeds maximum size of 24576 bytes"},
		{",method=PUT,headers.X-Token=abc", "method", "PUT"},
	} {
		src, err := newURLSource("urlTemplate="+st.URL+"/{key}"+c.conf, nil)
		if err != nil {
			t.Fatal(err)
		}
		fakeTime(src, 0)
		v, err := src.Get(c.key)
		if err != nil {
			v = err.Error()
		}
		if v != c.want {
			t.Errorf("%s %s: %q, want %q", c.conf, c.key, v, c.want)
		}
	}
	if st.header.Get("X-Token") != "abc" {
		t.Errorf("headers sent: %v", st.header)
	}
}

// name= and default work for url sources as for files, and the Store
// hides what a url source fetched.
func TestURLInStore(t *testing.T) {
	st := newSecretTarget(t, func(r *http.Request, _ int) (int, string) { return 200, "value-of" + r.URL.Path })
	f := writeFile(t, "f.txt", "k=file-value\n")
	s, err := ParseEnv([]string{"url=name=remote,default", "file=" + f},
		map[string]string{"K6_SECRET_SOURCE_URL_URL_TEMPLATE": st.URL + "/{key}"})
	if err != nil {
		t.Fatal(err)
	}
	a, err1 := s.Get(DefaultName, "k")
	b, err2 := s.Get("remote", "k")
	c, err3 := s.Get("file", "k")
	if err1 != nil || err2 != nil || err3 != nil || a != "value-of/k" || b != a || c != "file-value" {
		t.Fatalf("got %q %q %q, %v %v %v", a, b, c, err1, err2, err3)
	}
	if got := s.Redact("x value-of/k y"); got != "x "+Mask+" y" {
		t.Errorf("Redact: %q", got)
	}
}
