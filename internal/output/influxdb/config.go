package influxdb

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/optdecode"
	"github.com/metronome-load/metronome/output"
)

// The K6_INFLUXDB_* variables the output reads, with k6's names.
const (
	envPrefix           = "K6_INFLUXDB_"
	envAddr             = envPrefix + "ADDR"
	envProxy            = envPrefix + "PROXY"
	envUsername         = envPrefix + "USERNAME"
	envPassword         = envPrefix + "PASSWORD"
	envInsecure         = envPrefix + "INSECURE"
	envPayloadSize      = envPrefix + "PAYLOAD_SIZE"
	envPushInterval     = envPrefix + "PUSH_INTERVAL"
	envConcurrentWrites = envPrefix + "CONCURRENT_WRITES"
	envDB               = envPrefix + "DB"
	envPrecision        = envPrefix + "PRECISION"
	envRetention        = envPrefix + "RETENTION"
	envConsistency      = envPrefix + "CONSISTENCY"
	envTagsAsFields     = envPrefix + "TAGS_AS_FIELDS"
)

// Config is the output's configuration, k6's options with k6's defaults.
type Config struct {
	// Addr is the server, http(s)://host:port or udp://host:port.
	Addr string
	// Proxy is an HTTP proxy URL; empty for none.
	Proxy string
	// Username and Password set basic authentication.
	Username, Password string
	// Insecure accepts any server certificate.
	Insecure bool
	// PayloadSize is the largest UDP datagram, in bytes.
	PayloadSize int
	// PushInterval is how often the buffered points are written.
	PushInterval time.Duration
	// ConcurrentWrites is how many writes may be in flight at once.
	ConcurrentWrites int
	// DB is the database; the output creates it at start if it can.
	DB string
	// Precision is the timestamps' precision: ns (default), u, ms or s.
	Precision string
	// Retention and Consistency are passed to the server's /write.
	Retention, Consistency string
	// TagsAsFields are the tags written as fields instead (not indexed),
	// each as name or name:type with type string, int, float or bool.
	TagsAsFields []string
}

// DefaultConfig is the configuration with no variables set: k6's.
func DefaultConfig() Config {
	return Config{
		Addr:             "http://localhost:8086",
		DB:               "k6",
		PushInterval:     time.Second,
		ConcurrentWrites: 4,
		PayloadSize:      512,
		TagsAsFields:     []string{"vu", "iter", "url"},
	}
}

// ParseConfig reads the K6_INFLUXDB_* variables of env, then arg, the part
// of -o after '=' (http://user:pass@host:8086/db?option=value...), which
// wins. Errors name the variable or the option.
func ParseConfig(env map[string]string, arg string) (Config, error) {
	c := DefaultConfig()
	set := func(name, v string) error {
		switch name {
		case envAddr:
			c.Addr = v
		case envProxy:
			c.Proxy = v
		case envUsername:
			c.Username = v
		case envPassword:
			c.Password = v
		case envDB:
			c.DB = v
		case envPrecision:
			c.Precision = v
		case envRetention:
			c.Retention = v
		case envConsistency:
			c.Consistency = v
		case envInsecure:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not a boolean", v)
			}
			c.Insecure = b
		case envPayloadSize:
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("%q is not a positive number of bytes", v)
			}
			c.PayloadSize = n
		case envConcurrentWrites:
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("%q is not a positive number", v)
			}
			c.ConcurrentWrites = n
		case envPushInterval:
			d, err := duration.Parse(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("%q is not a positive duration", v)
			}
			c.PushInterval = d
		case envTagsAsFields:
			c.TagsAsFields = optdecode.SplitList(v)
		}
		return nil
	}
	for _, name := range []string{envAddr, envProxy, envUsername, envPassword, envDB, envPrecision,
		envRetention, envConsistency, envInsecure, envPayloadSize, envConcurrentWrites, envPushInterval, envTagsAsFields} {
		if v, ok := env[name]; ok && v != "" {
			if err := set(name, v); err != nil {
				return c, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	if arg != "" {
		if err := c.applyURL(arg, set); err != nil {
			return c, err
		}
	}
	return c, c.validate()
}

// queryOptions maps the query parameters of -o influxdb=URL to the
// variables they stand for, as k6 names them.
var queryOptions = map[string]string{
	"insecure":         envInsecure,
	"payload_size":     envPayloadSize,
	"precision":        envPrecision,
	"retention":        envRetention,
	"consistency":      envConsistency,
	"pushInterval":     envPushInterval,
	"concurrentWrites": envConcurrentWrites,
	"tagsAsFields":     envTagsAsFields,
}

// applyURL applies -o influxdb=URL: its scheme and host are the address,
// its path the database, its user info the credentials and its query the
// other options.
func (c *Config) applyURL(arg string, set func(name, v string) error) error {
	u, err := url.Parse(arg)
	if err != nil {
		return fmt.Errorf("-o influxdb=%s: not a URL", output.Redact(arg))
	}
	if u.Host != "" {
		c.Addr = u.Scheme + "://" + u.Host
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		c.DB = db
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	for k, vs := range u.Query() {
		name, ok := queryOptions[k]
		if !ok {
			return fmt.Errorf("-o influxdb: unknown option %q in the URL's query (known: insecure, payload_size, precision, retention, consistency, pushInterval, concurrentWrites, tagsAsFields)", k)
		}
		v := vs[0]
		if name == envTagsAsFields {
			// tagsAsFields may be repeated, one tag each.
			v = strings.Join(vs, ",")
		}
		if v == "" {
			continue
		}
		if err := set(name, v); err != nil {
			return fmt.Errorf("-o influxdb: option %s: %w", k, err)
		}
	}
	return nil
}

func (c Config) validate() error {
	u, err := url.Parse(c.Addr)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "udp") {
		return fmt.Errorf("%s: %q is not an http(s):// or udp:// address", envAddr, output.Redact(c.Addr))
	}
	if c.Proxy != "" {
		if p, err := url.Parse(c.Proxy); err != nil || p.Host == "" {
			return fmt.Errorf("%s: %q is not a proxy URL", envProxy, output.Redact(c.Proxy))
		}
	}
	if c.DB == "" {
		return fmt.Errorf("%s: the database name is empty", envDB)
	}
	if _, err := c.precision(); err != nil {
		return err
	}
	_, err = c.fieldKinds()
	return err
}

// precision returns the line-protocol precision and its /write name.
func (c Config) precision() (lineprotocol.Precision, error) {
	switch c.Precision {
	case "", "n", "ns":
		return lineprotocol.Nanosecond, nil
	case "u", "us", "µ":
		return lineprotocol.Microsecond, nil
	case "ms":
		return lineprotocol.Millisecond, nil
	case "s":
		return lineprotocol.Second, nil
	}
	return 0, fmt.Errorf("%s: %q is not a precision metronome writes (ns, u, ms or s)", envPrecision, c.Precision)
}

// precisionParam is the /write precision parameter: k6's client sends ns
// when none is set.
func (c Config) precisionParam() string {
	if c.Precision == "" {
		return "ns"
	}
	return c.Precision
}

// fieldKind is how a tag written as a field is typed.
type fieldKind int

const (
	stringField fieldKind = iota
	intField
	floatField
	boolField
)

// fieldKinds parses TagsAsFields.
func (c Config) fieldKinds() (map[string]fieldKind, error) {
	kinds := map[string]fieldKind{}
	for _, spec := range c.TagsAsFields {
		name, typ, _ := strings.Cut(spec, ":")
		if _, dup := kinds[name]; dup {
			return nil, fmt.Errorf("%s: the tag %q is listed twice", envTagsAsFields, name)
		}
		switch typ {
		case "", "string":
			kinds[name] = stringField
		case "int":
			kinds[name] = intField
		case "float":
			kinds[name] = floatField
		case "bool":
			kinds[name] = boolField
		default:
			return nil, fmt.Errorf("%s: %q is not a field type (string, int, float or bool) in %q", envTagsAsFields, typ, spec)
		}
	}
	return kinds, nil
}

// secrets lists the configured values that must never appear in a
// message: the password and the proxy's password. Values under 4
// characters are left out, since masking them would garble numbers;
// output.Redact's patterns still cover them inside URLs.
func (c Config) secrets() []string {
	var out []string
	if len(c.Password) >= 4 {
		out = append(out, c.Password)
	}
	if p, err := url.Parse(c.Proxy); err == nil && p.User != nil {
		if pw, _ := p.User.Password(); len(pw) >= 4 {
			out = append(out, pw)
		}
	}
	return out
}
