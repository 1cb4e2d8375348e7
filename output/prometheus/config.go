package prometheus

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/optdecode"
	"github.com/metronome-load/metronome/output"
)

// The K6_PROMETHEUS_RW_* variables the output reads, with k6's names.
const (
	envPrefix        = "K6_PROMETHEUS_RW_"
	envServerURL     = envPrefix + "SERVER_URL"
	envPushInterval  = envPrefix + "PUSH_INTERVAL"
	envTrendStats    = envPrefix + "TREND_STATS"
	envNative        = envPrefix + "TREND_AS_NATIVE_HISTOGRAM"
	envNativeSchema  = envPrefix + "NATIVE_HISTOGRAM_SCHEMA"
	envHeaderPrefix  = envPrefix + "HEADERS_"
	envHTTPHeaders   = envPrefix + "HTTP_HEADERS"
	envUsername      = envPrefix + "USERNAME"
	envPassword      = envPrefix + "PASSWORD"
	envBearerToken   = envPrefix + "BEARER_TOKEN"
	envInsecureTLS   = envPrefix + "INSECURE_SKIP_TLS_VERIFY"
	envStaleMarkers  = envPrefix + "STALE_MARKERS"
	defaultServerURL = "http://localhost:9090/api/v1/write"
)

// Config is the output's configuration.
type Config struct {
	// ServerURL is the full remote-write endpoint.
	ServerURL string
	// PushInterval is how often the aggregated series are sent.
	PushInterval time.Duration
	// TrendStats are the stats exported for each trend series, as k6 writes
	// them: count, sum, min, max, avg, med, p(x).
	TrendStats []string
	// TrendAsNativeHistogram exports trends as native histograms instead
	// of stat gauges.
	TrendAsNativeHistogram bool
	// NativeHistogramSchema is the native histograms' resolution, from -4
	// to 8: each power of two is split into 2^schema buckets. k6 uses 3.
	NativeHistogramSchema int32
	// Headers are added to every request.
	Headers map[string]string
	// Username and Password set basic authentication.
	Username, Password string
	// BearerToken sets an Authorization: Bearer header.
	BearerToken string
	// InsecureSkipTLSVerify accepts any server certificate.
	InsecureSkipTLSVerify bool
	// StaleMarkers sends a staleness marker for every series at stop, so
	// that Prometheus ends the series at once instead of 5 minutes later.
	StaleMarkers bool
}

// DefaultConfig is the configuration with no variables set.
func DefaultConfig() Config {
	return Config{
		ServerURL:    defaultServerURL,
		PushInterval: 5 * time.Second,
		TrendStats:   []string{"p(99)"},

		NativeHistogramSchema: defaultNativeSchema,
	}
}

// ParseConfig reads the K6_PROMETHEUS_RW_* variables of env. arg, the
// part of -o after '=', overrides the server URL when it is not empty.
// Errors name the variable.
func ParseConfig(env map[string]string, arg string) (Config, error) {
	c := DefaultConfig()
	if v, ok := env[envServerURL]; ok && v != "" {
		c.ServerURL = v
	}
	if arg != "" {
		c.ServerURL = arg
	}
	u, err := url.Parse(c.ServerURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("%s: %q is not an http(s) URL", envServerURL, output.Redact(c.ServerURL))
	}
	if v, ok := env[envPushInterval]; ok && v != "" {
		d, err := duration.Parse(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("%s: %q is not a positive duration", envPushInterval, v)
		}
		c.PushInterval = d
	}
	if v, ok := env[envTrendStats]; ok && v != "" {
		c.TrendStats = nil
		for _, s := range optdecode.SplitList(v) {
			if _, err := parseTrendStat(s); err != nil {
				return c, fmt.Errorf("%s: %w", envTrendStats, err)
			}
			c.TrendStats = append(c.TrendStats, s)
		}
		if len(c.TrendStats) == 0 {
			return c, fmt.Errorf("%s: no stat in %q", envTrendStats, v)
		}
	}
	if v, ok := env[envNativeSchema]; ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < minNativeSchema || n > int64(maxNativeSchema) {
			return c, fmt.Errorf("%s: %q is not a schema from %d to %d (each power of two split into 2^schema buckets)", envNativeSchema, v, minNativeSchema, maxNativeSchema)
		}
		c.NativeHistogramSchema = int32(n)
	}
	for name, dst := range map[string]*bool{
		envNative:       &c.TrendAsNativeHistogram,
		envInsecureTLS:  &c.InsecureSkipTLSVerify,
		envStaleMarkers: &c.StaleMarkers,
	} {
		if v, ok := env[name]; ok && v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return c, fmt.Errorf("%s: %q is not a boolean", name, v)
			}
			*dst = b
		}
	}
	c.Username = env[envUsername]
	c.Password = env[envPassword]
	c.BearerToken = env[envBearerToken]
	if c.BearerToken != "" && c.Username != "" {
		return c, fmt.Errorf("%s and %s are both set; use one way to authenticate", envBearerToken, envUsername)
	}
	c.Headers = map[string]string{}
	if v := env[envHTTPHeaders]; v != "" {
		for _, kv := range optdecode.SplitList(v) {
			k, val, ok := strings.Cut(kv, ":")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return c, fmt.Errorf("%s: %q is not name:value", envHTTPHeaders, kv)
			}
			c.Headers[k] = strings.TrimSpace(val)
		}
	}
	// HEADERS_<name> wins over HTTP_HEADERS, in a stable order.
	keys := make([]string, 0)
	for k := range env {
		if strings.HasPrefix(k, envHeaderPrefix) && len(k) > len(envHeaderPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		c.Headers[k[len(envHeaderPrefix):]] = env[k]
	}
	return c, nil
}

// trendStat is one parsed entry of TREND_STATS.
type trendStat struct {
	// suffix is the metric-name suffix: p(99.9) → p999.
	suffix string
	// kind is count, sum, min, max, avg, med or p.
	kind string
	// pct is the percentile when kind is "p".
	pct float64
}

func parseTrendStat(s string) (trendStat, error) {
	switch s {
	case "count", "sum", "min", "max", "avg", "med":
		return trendStat{suffix: s, kind: s}, nil
	}
	if strings.HasPrefix(s, "p(") && strings.HasSuffix(s, ")") {
		num := s[2 : len(s)-1]
		p, err := strconv.ParseFloat(num, 64)
		if err == nil && p >= 0 && p <= 100 {
			// k6's naming: drop the parentheses and the decimal point.
			return trendStat{suffix: "p" + strings.ReplaceAll(num, ".", ""), kind: "p", pct: p}, nil
		}
	}
	return trendStat{}, fmt.Errorf("unknown trend stat %q (use count, sum, min, max, avg, med or p(x) with 0 ≤ x ≤ 100)", s)
}

// RedactedURL is the server URL as messages show it: its password, if
// any, masked.
func (c Config) RedactedURL() string {
	u, err := url.Parse(c.ServerURL)
	if err != nil {
		return output.Redact(c.ServerURL)
	}
	return u.Redacted()
}

// sensitiveHeader matches the names of headers whose values are
// credentials.
var sensitiveHeader = regexp.MustCompile(`(?i)auth|token|key|secret|cookie|pass`)

// secrets lists the configured values that must never appear in a
// message: the password, the bearer token, the URL's password and the
// values of credential-like headers. Values under 4 characters are left
// out, since masking them would garble numbers in messages; the patterns
// of output.Redact still cover them where they appear as credentials.
func (c Config) secrets() []string {
	var out []string
	add := func(s string) {
		if len(s) >= 4 {
			out = append(out, s)
		}
	}
	add(c.Password)
	add(c.BearerToken)
	if u, err := url.Parse(c.ServerURL); err == nil && u.User != nil {
		p, _ := u.User.Password()
		add(p)
	}
	for k, v := range c.Headers {
		if sensitiveHeader.MatchString(k) {
			add(v)
		}
	}
	return out
}
