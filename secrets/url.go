package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"golang.org/x/time/rate"

	"github.com/metronome-load/metronome/duration"
)

// urlConfig is the configuration of a url secret source, in k6's terms:
// every secret is one HTTP request to URLTemplate with {key} replaced by
// the secret's name.
type urlConfig struct {
	URLTemplate string
	// Headers are sent with every request; a later layer's headers
	// replace an earlier layer's as a whole, as in k6.
	Headers map[string]string
	Method  string
	// ResponsePath is a gjson path to the secret in a JSON body; empty
	// takes the whole body.
	ResponsePath string
	// RequestsPerMinute and Burst bound the requests of the source (a
	// token bucket); Timeout bounds one request; MaxRetries is how many
	// times a transient failure is tried again, RetryBackoff the base of
	// the waits between.
	RequestsPerMinute, Burst, MaxRetries int64
	Timeout, RetryBackoff                time.Duration
}

// urlLayer is one layer of configuration (the environment, a JSON file,
// the flag's keys): what it does not set is nil.
type urlLayer struct {
	URLTemplate       *string           `json:"urlTemplate"`
	Headers           map[string]string `json:"headers"`
	Method            *string           `json:"method"`
	ResponsePath      *string           `json:"responsePath"`
	RequestsPerMinute *int64            `json:"requestsPerMinuteLimit"`
	Burst             *int64            `json:"requestsBurst"`
	Timeout           *jsonDuration     `json:"timeout"`
	MaxRetries        *int64            `json:"maxRetries"`
	RetryBackoff      *jsonDuration     `json:"retryBackoff"`
}

// jsonDuration is a duration in a url source's JSON config file: a string
// as k6 writes durations ("30s", "1d", "500" meaning milliseconds) or a
// number of milliseconds.
type jsonDuration time.Duration

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := duration.Parse(s)
		if err != nil {
			return err
		}
		*d = jsonDuration(v)
		return nil
	}
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return fmt.Errorf("'%s' is not a valid duration value", b)
	}
	*d = jsonDuration(ms * float64(time.Millisecond))
	return nil
}

// defaultURLConfig is k6's: GET, the whole body, 300 requests a minute
// with a burst of 10, a 30 s timeout, 3 retries from a 1 s base.
func defaultURLConfig() urlConfig {
	return urlConfig{Method: http.MethodGet, RequestsPerMinute: 300, Burst: 10,
		Timeout: 30 * time.Second, MaxRetries: 3, RetryBackoff: time.Second}
}

// apply lays l over c.
func (c *urlConfig) apply(l urlLayer) {
	set := func(dst *string, v *string) {
		if v != nil && *v != "" {
			*dst = *v
		}
	}
	set(&c.URLTemplate, l.URLTemplate)
	if l.Headers != nil {
		c.Headers = l.Headers
	}
	if l.Method != nil {
		c.Method = *l.Method
	}
	if l.ResponsePath != nil {
		c.ResponsePath = *l.ResponsePath
	}
	for _, p := range []struct {
		dst *int64
		v   *int64
	}{{&c.RequestsPerMinute, l.RequestsPerMinute}, {&c.Burst, l.Burst}, {&c.MaxRetries, l.MaxRetries}} {
		if p.v != nil {
			*p.dst = *p.v
		}
	}
	if l.Timeout != nil {
		c.Timeout = time.Duration(*l.Timeout)
	}
	if l.RetryBackoff != nil {
		c.RetryBackoff = time.Duration(*l.RetryBackoff)
	}
}

// urlEnvPrefix starts the environment variables that configure a url
// source: K6_SECRET_SOURCE_URL_URL_TEMPLATE, …_HEADER_<NAME>, and so on.
const urlEnvPrefix = "K6_SECRET_SOURCE_URL_"

// urlEnvLayer reads the K6_SECRET_SOURCE_URL_* variables; an empty one
// is not set.
func urlEnvLayer(env map[string]string) (urlLayer, error) {
	var l urlLayer
	str := func(name string) *string {
		if v := env[urlEnvPrefix+name]; v != "" {
			return &v
		}
		return nil
	}
	l.URLTemplate, l.Method, l.ResponsePath = str("URL_TEMPLATE"), str("METHOD"), str("RESPONSE_PATH")
	for _, d := range []struct {
		env, key string
		dst      **jsonDuration
	}{{"TIMEOUT", "timeout", &l.Timeout}, {"RETRY_BACKOFF", "retryBackoff", &l.RetryBackoff}} {
		if v := str(d.env); v != nil {
			if err := parseURLDuration(*v, d.dst, d.key); err != nil {
				return l, err
			}
		}
	}
	for _, n := range []struct {
		env, key string
		dst      **int64
	}{{"MAX_RETRIES", "maxRetries", &l.MaxRetries}, {"REQUESTS_PER_MINUTE_LIMIT", "requestsPerMinuteLimit", &l.RequestsPerMinute},
		{"REQUESTS_BURST", "requestsBurst", &l.Burst}} {
		if v := str(n.env); v != nil {
			if err := parseURLInt(*v, n.dst, n.key); err != nil {
				return l, err
			}
		}
	}
	for k, v := range env {
		if h, ok := strings.CutPrefix(k, urlEnvPrefix+"HEADER_"); ok {
			if l.Headers == nil {
				l.Headers = map[string]string{}
			}
			l.Headers[h] = v
		}
	}
	return l, nil
}

// parseURLInt reads an integer as k6 does (fmt's %d: leading digits).
func parseURLInt(v string, dst **int64, key string) error {
	var n int64
	if _, err := fmt.Sscanf(v, "%d", &n); err != nil {
		return fmt.Errorf("invalid %s: %w", key, err)
	}
	*dst = &n
	return nil
}

// parseURLDuration reads a duration of the flag or the environment, in
// Go's syntax ("500ms", "2s"), as k6 does there.
func parseURLDuration(v string, dst **jsonDuration, key string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("invalid %s: %w", key, err)
	}
	jd := jsonDuration(d)
	*dst = &jd
	return nil
}

// urlFlagLayers reads the flag's comma-separated keys: config=FILE (a JSON
// file of the same keys, under those of the flag whatever their order),
// urlTemplate, method, responsePath, timeout, requestsPerMinuteLimit,
// requestsBurst, maxRetries, retryBackoff and headers.NAME.
func urlFlagLayers(conf string) (file, flag urlLayer, err error) {
	if conf == "" {
		return file, flag, nil
	}
	for _, part := range strings.Split(conf, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return file, flag, fmt.Errorf("invalid config format %q, expected key=value", part)
		}
		switch k {
		case "config":
			if file, err = readURLConfigFile(v); err != nil {
				return file, flag, err
			}
		case "urlTemplate":
			flag.URLTemplate = &v
		case "method":
			flag.Method = &v
		case "responsePath":
			flag.ResponsePath = &v
		case "timeout":
			err = parseURLDuration(v, &flag.Timeout, k)
		case "retryBackoff":
			err = parseURLDuration(v, &flag.RetryBackoff, k)
		case "requestsPerMinuteLimit":
			err = parseURLInt(v, &flag.RequestsPerMinute, k)
		case "requestsBurst":
			err = parseURLInt(v, &flag.Burst, k)
		case "maxRetries":
			err = parseURLInt(v, &flag.MaxRetries, k)
		default:
			h, ok := strings.CutPrefix(k, "headers.")
			if !ok {
				return file, flag, fmt.Errorf("unknown configuration key: %q", k)
			}
			if flag.Headers == nil {
				flag.Headers = map[string]string{}
			}
			flag.Headers[h] = v
		}
		if err != nil {
			return file, flag, err
		}
	}
	return file, flag, nil
}

func readURLConfigFile(path string) (urlLayer, error) {
	var l urlLayer
	b, err := os.ReadFile(path)
	if err != nil {
		return l, fmt.Errorf("failed to open config file: %w", err)
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("failed to parse JSON config: %w", err)
	}
	return l, nil
}

// validate refuses what k6 refuses, in k6's order and words.
func (c urlConfig) validate() error {
	switch {
	case c.URLTemplate == "":
		return errors.New("urlTemplate is required")
	case !strings.Contains(c.URLTemplate, "{key}"):
		return errors.New("urlTemplate must contain {key} placeholder")
	}
	u, err := url.Parse(strings.ReplaceAll(c.URLTemplate, "{key}", "test"))
	switch {
	case err != nil:
		return fmt.Errorf("urlTemplate is not a valid URL: %w", err)
	case u.Scheme == "":
		return errors.New("urlTemplate must be an absolute URL with a scheme (e.g., https://...)")
	case c.Timeout <= 0:
		return errors.New("timeout must be greater than 0")
	case c.RequestsPerMinute <= 0:
		return errors.New("requestsPerMinuteLimit must be greater than 0")
	case c.Burst <= 0:
		return errors.New("requestsBurst must be greater than 0")
	case c.MaxRetries < 0:
		return errors.New("maxRetries must be non-negative")
	case c.RetryBackoff <= 0:
		return errors.New("retryBackoff must be greater than 0")
	}
	return nil
}

// newURLSource makes the source of a --secret-source=url=… value (conf is
// what follows "url=", name and default taken out) over the environment
// env: k6's defaults, then the K6_SECRET_SOURCE_URL_* variables, then the
// flag's config file, then the flag's keys.
func newURLSource(conf string, env map[string]string) (*urlSource, error) {
	c := defaultURLConfig()
	envLayer, err := urlEnvLayer(env)
	if err == nil {
		c.apply(envLayer)
		var file, flag urlLayer
		if file, flag, err = urlFlagLayers(conf); err == nil {
			c.apply(file)
			c.apply(flag)
			err = c.validate()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("missing or invalid config: %w", err)
	}
	return &urlSource{
		conf:    c,
		client:  &http.Client{Timeout: c.Timeout},
		limiter: rate.NewLimiter(rate.Every(time.Minute/time.Duration(c.RequestsPerMinute)), int(c.Burst)),
		now:     time.Now,
		sleep:   time.Sleep,
		jitter:  func() time.Duration { return time.Duration(rand.Int64N(1000)) * time.Millisecond },
	}, nil
}

// urlSource fetches secrets over HTTP, each once: a value fetched is kept
// for the rest of the run, as k6 keeps every source's values; a failure is
// not kept, so a later get tries again.
type urlSource struct {
	conf    urlConfig
	client  *http.Client
	limiter *rate.Limiter
	// now, sleep and jitter are the clock, the wait and the random part
	// of a retry's wait; tests replace them.
	now    func() time.Time
	sleep  func(time.Duration)
	jitter func() time.Duration

	cache sync.Map
}

// maxSecretSize is the largest response body a secret is taken from.
const maxSecretSize = 24 * 1024

var errFailedToGetSecret = errors.New("failed to get secret")

// Get returns the secret called key. It waits for the rate limit, then
// tries the request up to MaxRetries+1 times while it fails transiently
// (a network error, a 5xx or 429 status), waiting floor(backoff^n) whole
// seconds plus up to a second of jitter before the nth retry (k6's
// arithmetic, the backoff in seconds). Any other status than 200 fails
// with "status code N: failed to get secret".
func (s *urlSource) Get(key string) (string, error) {
	if v, ok := s.cache.Load(key); ok {
		return v.(string), nil
	}
	now := s.now()
	s.sleep(s.limiter.ReserveN(now, 1).DelayFrom(now))
	var last error
	for i := range s.conf.MaxRetries + 1 {
		if i > 0 {
			whole := time.Duration(math.Pow(s.conf.RetryBackoff.Seconds(), float64(i)))
			s.sleep(whole*time.Second + s.jitter())
		}
		v, retry, err := s.fetch(key)
		if err == nil {
			s.cache.Store(key, v)
			return v, nil
		}
		last = err
		if !retry {
			break
		}
	}
	return "", last
}

// fetch makes one request for key; retry says whether its failure is
// transient.
func (s *urlSource) fetch(key string) (v string, retry bool, err error) {
	req, err := http.NewRequestWithContext(context.Background(), s.conf.Method,
		strings.ReplaceAll(s.conf.URLTemplate, "{key}", key), nil)
	if err != nil {
		return "", true, fmt.Errorf("failed to create request: %w", err)
	}
	for k, v := range s.conf.Headers {
		req.Header.Set(k, v)
	}
	res, err := s.client.Do(req)
	if err != nil {
		return "", true, fmt.Errorf("%w: %w", errFailedToGetSecret, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests,
			fmt.Errorf("status code %d: %w", res.StatusCode, errFailedToGetSecret)
	}
	v, err = secretOf(res.Body, s.conf.ResponsePath)
	if err != nil {
		return "", false, fmt.Errorf("failed to extract secret: %w", err)
	}
	return v, false, nil
}

// secretOf reads the secret from a response body: the whole body, or the
// string at path in a JSON body.
func secretOf(body io.Reader, path string) (string, error) {
	data, err := io.ReadAll(io.LimitReader(body, maxSecretSize+1))
	if err != nil {
		return "", fmt.Errorf("failed to read response body: %w", err)
	}
	if len(data) > maxSecretSize {
		return "", fmt.Errorf("secret response exceeds maximum size of %d bytes", maxSecretSize)
	}
	if path == "" {
		return string(data), nil
	}
	r := gjson.GetBytes(data, path)
	switch {
	case !r.Exists():
		return "", fmt.Errorf("path %q not found in response", path)
	case r.Type != gjson.String:
		return "", fmt.Errorf("secret value at path %q is not a string (got %s)", path, r.Type)
	}
	return r.String(), nil
}
