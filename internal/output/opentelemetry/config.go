package opentelemetry

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/duration"
)

// The variables the output reads, with k6's names.
const (
	envPrefix         = "K6_OTEL_"
	envServiceName    = envPrefix + "SERVICE_NAME"
	envOTelService    = "OTEL_SERVICE_NAME"
	envServiceVersion = envPrefix + "SERVICE_VERSION"
	envMetricPrefix   = envPrefix + "METRIC_PREFIX"
	envFlushInterval  = envPrefix + "FLUSH_INTERVAL"
	envProtocol       = envPrefix + "EXPORTER_PROTOCOL"
	envExportInterval = envPrefix + "EXPORT_INTERVAL"
	envHeaders        = envPrefix + "HEADERS"
	envTLSInsecure    = envPrefix + "TLS_INSECURE_SKIP_VERIFY"
	envTLSCertificate = envPrefix + "TLS_CERTIFICATE"
	envTLSClientCert  = envPrefix + "TLS_CLIENT_CERTIFICATE"
	envTLSClientKey   = envPrefix + "TLS_CLIENT_KEY"
	envHTTPInsecure   = envPrefix + "HTTP_EXPORTER_INSECURE"
	envHTTPEndpoint   = envPrefix + "HTTP_EXPORTER_ENDPOINT"
	envHTTPURLPath    = envPrefix + "HTTP_EXPORTER_URL_PATH"
	envHTTPUsername   = envPrefix + "HTTP_EXPORTER_USERNAME"
	envHTTPPassword   = envPrefix + "HTTP_EXPORTER_PASSWORD"
	envGRPCEndpoint   = envPrefix + "GRPC_EXPORTER_ENDPOINT"
	envGRPCInsecure   = envPrefix + "GRPC_EXPORTER_INSECURE"
	// envHistogram is the OpenTelemetry variable that picks the
	// histograms' aggregation.
	envHistogram = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"
)

// The exporter protocols.
const (
	protocolGRPC = "grpc"
	protocolHTTP = "http/protobuf"
)

// The histogram aggregations envHistogram names.
const (
	histogramExponential = "base2_exponential_bucket_histogram"
	histogramExplicit    = "explicit_bucket_histogram"
)

// Config is the output's configuration: k6's options with k6's defaults.
type Config struct {
	ServiceName, ServiceVersion string
	// MetricPrefix is prepended to every metric name.
	MetricPrefix string
	// FlushInterval is accepted for k6's sake: metronome records every
	// sample as it arrives, so there is nothing to flush between exports.
	FlushInterval time.Duration
	// Protocol is grpc or http/protobuf.
	Protocol string
	// ExportInterval is how often the metrics are exported.
	ExportInterval time.Duration
	// Headers are sent with every export.
	Headers map[string]string
	// TLS: skip verification, a CA file, a client certificate and key.
	TLSInsecureSkipVerify, tlsInsecureSet bool
	TLSCertificate                        string
	TLSClientCertificate, TLSClientKey    string
	// HTTP exporter: insecure means plain http.
	HTTPInsecure               bool
	HTTPEndpoint, HTTPURLPath  string
	HTTPUsername, HTTPPassword string
	httpUsernameSet            bool
	// gRPC exporter: insecure means no TLS.
	GRPCEndpoint string
	GRPCInsecure bool
	// Histogram is the aggregation of trends: base2_exponential_bucket_histogram
	// (metronome's default) or explicit_bucket_histogram (k6's).
	Histogram string
}

// DefaultConfig is the configuration with no variables set.
func DefaultConfig(version string) Config {
	return Config{
		ServiceName:    "k6",
		ServiceVersion: version,
		FlushInterval:  time.Second,
		Protocol:       protocolGRPC,
		ExportInterval: 10 * time.Second,
		HTTPEndpoint:   "localhost:4318",
		HTTPURLPath:    "/v1/metrics",
		GRPCEndpoint:   "localhost:4317",
		Histogram:      histogramExponential,
	}
}

// ParseConfig reads the K6_OTEL_* variables of env (and OTEL_SERVICE_NAME,
// which K6_OTEL_SERVICE_NAME overrides). Errors name the variable.
func ParseConfig(env map[string]string, version string) (Config, error) {
	c := DefaultConfig(version)
	str := map[string]*string{
		envOTelService: &c.ServiceName, envServiceName: &c.ServiceName, envServiceVersion: &c.ServiceVersion,
		envMetricPrefix: &c.MetricPrefix, envProtocol: &c.Protocol, envTLSCertificate: &c.TLSCertificate,
		envTLSClientCert: &c.TLSClientCertificate, envTLSClientKey: &c.TLSClientKey, envHTTPEndpoint: &c.HTTPEndpoint,
		envHTTPURLPath: &c.HTTPURLPath, envHTTPPassword: &c.HTTPPassword, envGRPCEndpoint: &c.GRPCEndpoint,
		envHistogram: &c.Histogram,
	}
	// OTEL_SERVICE_NAME first, so that K6_OTEL_SERVICE_NAME wins.
	for _, name := range []string{envOTelService, envServiceName, envServiceVersion, envMetricPrefix, envProtocol,
		envTLSCertificate, envTLSClientCert, envTLSClientKey, envHTTPEndpoint, envHTTPURLPath, envHTTPPassword,
		envGRPCEndpoint, envHistogram} {
		if v, ok := env[name]; ok {
			*str[name] = v
		}
	}
	if v, ok := env[envHTTPUsername]; ok {
		c.HTTPUsername, c.httpUsernameSet = v, true
	}
	for name, dst := range map[string]*time.Duration{envFlushInterval: &c.FlushInterval, envExportInterval: &c.ExportInterval} {
		if v, ok := env[name]; ok && v != "" {
			d, err := duration.Parse(v)
			if err != nil || d <= 0 {
				return c, fmt.Errorf("%s: %q is not a positive duration", name, v)
			}
			*dst = d
		}
	}
	for name, dst := range map[string]*bool{envTLSInsecure: &c.TLSInsecureSkipVerify, envHTTPInsecure: &c.HTTPInsecure, envGRPCInsecure: &c.GRPCInsecure} {
		if v, ok := env[name]; ok && v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return c, fmt.Errorf("%s: %q is not a boolean", name, v)
			}
			*dst = b
			if name == envTLSInsecure {
				c.tlsInsecureSet = true
			}
		}
	}
	if v, ok := env[envHeaders]; ok && v != "" {
		h, err := parseHeaders(v)
		if err != nil {
			return c, fmt.Errorf("%s: %w", envHeaders, err)
		}
		c.Headers = h
	}
	return c, c.validate()
}

// parseHeaders reads k6's K6_OTEL_HEADERS: k1=v1,k2=v2, each part
// URL-escaped.
func parseHeaders(raw string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(raw, ",") {
		rk, rv, ok := strings.Cut(kv, "=")
		if !ok {
			// The value may be a credential: quote only the name.
			return nil, fmt.Errorf("%q is not name=value", strings.TrimSpace(rk))
		}
		k, err := url.PathUnescape(strings.TrimSpace(rk))
		if err != nil {
			return nil, fmt.Errorf("the name %q: %w", rk, err)
		}
		v, err := url.PathUnescape(strings.TrimSpace(rv))
		if err != nil {
			return nil, fmt.Errorf("the value of %q is not URL-escaped correctly", k)
		}
		out[k] = v
	}
	return out, nil
}

func (c Config) validate() error {
	if c.ServiceName == "" {
		return fmt.Errorf("%s: the service name is empty", envServiceName)
	}
	if c.ServiceVersion == "" {
		return fmt.Errorf("%s: the service version is empty", envServiceVersion)
	}
	switch c.Protocol {
	case protocolGRPC:
		if c.GRPCEndpoint == "" {
			return fmt.Errorf("%s: the endpoint is empty", envGRPCEndpoint)
		}
	case protocolHTTP:
		if c.HTTPEndpoint == "" {
			return fmt.Errorf("%s: the endpoint is empty", envHTTPEndpoint)
		}
		if strings.HasPrefix(c.HTTPEndpoint, "http://") || strings.HasPrefix(c.HTTPEndpoint, "https://") {
			return fmt.Errorf("%s: %q must be host:port, without a scheme (%s=true for plain http)", envHTTPEndpoint, c.HTTPEndpoint, envHTTPInsecure)
		}
	default:
		return fmt.Errorf("%s: %q is not an exporter protocol (%s or %s)", envProtocol, c.Protocol, protocolGRPC, protocolHTTP)
	}
	if c.Histogram != histogramExponential && c.Histogram != histogramExplicit {
		return fmt.Errorf("%s: %q is not a histogram aggregation (%s or %s)", envHistogram, c.Histogram, histogramExponential, histogramExplicit)
	}
	return nil
}

// endpoint is where exports go, as the banner shows it, k6's way.
func (c Config) endpoint() string {
	if c.Protocol == protocolHTTP {
		scheme := "https"
		if c.HTTPInsecure {
			scheme = "http"
		}
		return fmt.Sprintf("%s, %s://%s%s", c.Protocol, scheme, c.HTTPEndpoint, c.HTTPURLPath)
	}
	s := c.Protocol + ", " + c.GRPCEndpoint
	if c.GRPCInsecure {
		s = c.Protocol + " (insecure), " + c.GRPCEndpoint
	}
	return s
}

// headers returns the headers of every export, basic authentication
// included when a user is set.
func (c Config) headers() map[string]string {
	h := map[string]string{}
	for k, v := range c.Headers {
		h[k] = v
	}
	if c.httpUsernameSet {
		h["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte(c.HTTPUsername+":"+c.HTTPPassword))
	}
	return h
}

// secrets are the values that must never appear in a message: every
// header's value (they carry API keys and tokens) and the password.
func (c Config) secrets() []string {
	var out []string
	add := func(s string) {
		if len(s) >= 4 {
			out = append(out, s)
		}
	}
	for _, v := range c.headers() {
		add(v)
		if scheme, cred, ok := strings.Cut(v, " "); ok && scheme != "" {
			add(cred)
		}
	}
	add(c.HTTPPassword)
	return out
}

// tlsConfig is the exporter's TLS configuration, nil when none of the TLS
// options is set (the exporter's defaults then apply).
func (c Config) tlsConfig() (*tls.Config, error) {
	if !c.tlsInsecureSet && c.TLSCertificate == "" && c.TLSClientCertificate == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: c.TLSInsecureSkipVerify} //nolint:gosec // the user asked for it
	if c.TLSCertificate != "" {
		pem, err := os.ReadFile(c.TLSCertificate)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envTLSCertificate, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", envTLSCertificate, c.TLSCertificate)
		}
		cfg.RootCAs = pool
	}
	if c.TLSClientCertificate != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSClientCertificate, c.TLSClientKey)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", envTLSClientCert, envTLSClientKey, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
