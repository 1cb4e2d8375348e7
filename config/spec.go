package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/executor"
)

// spec describes one option: its JSON name, the K6_* variable that sets it,
// the checks its value must pass, its default and how a higher tier
// replaces it. One table drives script and config file decoding (Parse),
// K6_* variables (FromEnv), flags (Set), layering (Apply) and defaults
// (Consolidate), so they agree on every option: adding an option is an
// Options field, one entry here, and its use.
type spec struct {
	name string
	// env is the K6_* variable, "" when the option is not read from the
	// environment (scenarios, execution segments).
	env string
	// field returns a pointer to the option's field in o: **int64, **bool,
	// **string, **duration.Duration, **TLSVersions, *[]string,
	// *map[string]string, *[]Stage, *[]TLSAuth, *map[string][]Threshold,
	// *map[string]json.RawMessage or *DNS.
	field func(o *Options) any
	// check validates a decoded value (int64, bool, string, time.Duration,
	// TLSVersions, []string, map[string]string, []Stage, []TLSAuth,
	// map[string][]Threshold, DNS); nil
	// means any value of the right type is fine. The error says what is
	// wrong without naming the option; callers add the name.
	check func(v any) error
	// text, when set, converts the textual form (flags, K6_* variables)
	// before the usual parsing; it serves options whose text form differs
	// from their JSON form.
	text func(s string) string
	// def, when set, is the value Consolidate gives the option when no
	// tier set it, in check's form (int64, time.Duration, []string), or a
	// func() string computed then.
	def any
	// shortcut marks the options that describe the load (duration,
	// iterations, stages, scenarios): a tier setting any of them replaces
	// all four of the tiers below (see Apply).
	shortcut bool
	// keepEmpty makes an empty map in a higher tier leave the lower tier's
	// value alone (tags, as in k6); otherwise any set value replaces it.
	keepEmpty bool
	// onlyFlag, when set, is the flag of an option k6 reads only from it
	// and its K6_* variable (localIPs): script options and config files
	// that set it get a warning and are otherwise ignored.
	onlyFlag string
	// warn, when set, returns warnings about a JSON value that decoded
	// (keys k6 ignores, say), each naming its path below path.
	warn func(path string, raw json.RawMessage) []string
}

var specs = []spec{
	{name: "vus", env: "K6_VUS", field: func(o *Options) any { return &o.VUs }, check: atLeast(0)},
	{name: "duration", env: "K6_DURATION", field: func(o *Options) any { return &o.Duration }, check: nonNegativeDuration, shortcut: true},
	{name: "iterations", env: "K6_ITERATIONS", field: func(o *Options) any { return &o.Iterations }, check: atLeast(1), shortcut: true},
	{name: "stages", env: "K6_STAGES", field: func(o *Options) any { return &o.Stages }, check: checkStages, shortcut: true},
	{name: "scenarios", field: func(o *Options) any { return &o.Scenarios }, shortcut: true},
	{name: "thresholds", env: "", field: func(o *Options) any { return &o.Thresholds }, check: checkThresholds},

	{name: "setupTimeout", env: "K6_SETUP_TIMEOUT", field: func(o *Options) any { return &o.SetupTimeout }, check: nonNegativeDuration, def: DefaultSetupTimeout},
	{name: "teardownTimeout", env: "K6_TEARDOWN_TIMEOUT", field: func(o *Options) any { return &o.TeardownTimeout }, check: nonNegativeDuration, def: DefaultTeardownTimeout},
	{name: "handleSummaryTimeout", env: "K6_HANDLE_SUMMARY_TIMEOUT", field: func(o *Options) any { return &o.HandleSummaryTimeout }, check: nonNegativeDuration, def: DefaultHandleSummaryTimeout},
	{name: "noSetup", env: "K6_NO_SETUP", field: func(o *Options) any { return &o.NoSetup }},
	{name: "noTeardown", env: "K6_NO_TEARDOWN", field: func(o *Options) any { return &o.NoTeardown }},

	{name: "summaryTrendStats", env: "K6_SUMMARY_TREND_STATS", field: func(o *Options) any { return &o.SummaryTrendStats }, check: checkTrendStats, def: DefaultSummaryTrendStats},
	{name: "summaryTimeUnit", env: "K6_SUMMARY_TIME_UNIT", field: func(o *Options) any { return &o.SummaryTimeUnit }, check: checkTimeUnit},
	{name: "noThresholds", env: "K6_NO_THRESHOLDS", field: func(o *Options) any { return &o.NoThresholds }},

	{name: "tags", env: "K6_TAGS", field: func(o *Options) any { return &o.Tags }, check: checkTags, keepEmpty: true},
	{name: "systemTags", env: "K6_SYSTEM_TAGS", field: func(o *Options) any { return &o.SystemTags }, check: checkSystemTags, def: DefaultSystemTags},

	{name: "maxRedirects", env: "K6_MAX_REDIRECTS", field: func(o *Options) any { return &o.MaxRedirects }, check: atLeast(0), def: int64(DefaultMaxRedirects)},
	{name: "userAgent", env: "K6_USER_AGENT", field: func(o *Options) any { return &o.UserAgent }, def: DefaultUserAgent},
	{name: "insecureSkipTLSVerify", env: "K6_INSECURE_SKIP_TLS_VERIFY", field: func(o *Options) any { return &o.InsecureSkipTLSVerify }},
	// k6 reads no K6_TLS_VERSION, and K6_TLSAUTH fails on any value
	// there; K6_TLS_CIPHER_SUITES takes numeric IDs, and here names too.
	{name: "tlsVersion", field: func(o *Options) any { return &o.TLSVersion }, check: checkTLSVersions},
	{name: "tlsCipherSuites", env: "K6_TLS_CIPHER_SUITES", field: func(o *Options) any { return &o.TLSCipherSuites }, check: checkCipherSuites, text: cipherSuitesText},
	{name: "tlsAuth", field: func(o *Options) any { return &o.TLSAuth }, check: checkTLSAuth},
	{name: "discardResponseBodies", env: "K6_DISCARD_RESPONSE_BODIES", field: func(o *Options) any { return &o.DiscardResponseBodies }},
	{name: "batch", env: "K6_BATCH", field: func(o *Options) any { return &o.Batch }, check: atLeast(1), def: int64(DefaultBatch)},
	{name: "batchPerHost", env: "K6_BATCH_PER_HOST", field: func(o *Options) any { return &o.BatchPerHost }, check: atLeast(0), def: int64(DefaultBatchPerHost)},
	{name: "rps", env: "K6_RPS", field: func(o *Options) any { return &o.RPS }},
	{name: "noConnectionReuse", env: "K6_NO_CONNECTION_REUSE", field: func(o *Options) any { return &o.NoConnectionReuse }},
	{name: "noVUConnectionReuse", env: "K6_NO_VU_CONNECTION_REUSE", field: func(o *Options) any { return &o.NoVUConnectionReuse }},
	{name: "noCookiesReset", env: "K6_NO_COOKIES_RESET", field: func(o *Options) any { return &o.NoCookiesReset }},
	{name: "minIterationDuration", env: "K6_MIN_ITERATION_DURATION", field: func(o *Options) any { return &o.MinIterationDuration }, check: nonNegativeDuration},
	{name: "throw", env: "K6_THROW", field: func(o *Options) any { return &o.Throw }},
	{name: "httpDebug", env: "K6_HTTP_DEBUG", field: func(o *Options) any { return &o.HTTPDebug }, check: checkHTTPDebug, text: httpDebugText},
	{name: "blacklistIPs", env: "K6_BLACKLIST_IPS", field: func(o *Options) any { return &o.BlacklistIPs }, check: checkIPRanges},
	{name: "blockHostnames", env: "K6_BLOCK_HOSTNAMES", field: func(o *Options) any { return &o.BlockHostnames }, check: checkHostnamePatterns},
	// k6 reads no K6_HOSTS.
	{name: "hosts", field: func(o *Options) any { return &o.Hosts }, check: checkHosts},
	{name: "dns", env: "K6_DNS", field: func(o *Options) any { return &o.DNS }, check: checkDNS, warn: dnsWarnings},
	{name: "localIPs", env: "K6_LOCAL_IPS", field: func(o *Options) any { return &o.LocalIPs }, check: checkLocalIPs, onlyFlag: "--local-ips"},

	{name: "expectedInterval", env: "K6_EXPECTED_INTERVAL", field: func(o *Options) any { return &o.ExpectedInterval }, check: checkExpectedInterval},
	{name: "latencyTrends", env: "K6_LATENCY_TRENDS", field: func(o *Options) any { return &o.LatencyTrends }, check: checkLatencyTrends},

	{name: "executionSegment", field: func(o *Options) any { return &o.ExecutionSegment }},
	{name: "executionSegmentSequence", field: func(o *Options) any { return &o.ExecutionSegmentSequence }},
}

var specByName = func() map[string]*spec {
	m := make(map[string]*spec, len(specs))
	for i := range specs {
		m[specs[i].name] = &specs[i]
	}
	return m
}()

// Names lists the JSON names of every option metronome understands,
// sorted.
func Names() []string {
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		names = append(names, s.name)
	}
	sort.Strings(names)
	return names
}

// EnvVars maps each K6_* variable FromEnv reads to the option it sets.
func EnvVars() map[string]string {
	m := make(map[string]string, len(specs))
	for _, s := range specs {
		if s.env != "" {
			m[s.env] = s.name
		}
	}
	return m
}

// value returns the value an option holds in o, dereferenced as check
// expects it, and whether it is set.
func (s *spec) value(o *Options) (any, bool) {
	switch p := s.field(o).(type) {
	case **int64:
		if *p != nil {
			return **p, true
		}
	case **bool:
		if *p != nil {
			return **p, true
		}
	case **string:
		if *p != nil {
			return **p, true
		}
	case **duration.Duration:
		if *p != nil {
			return (*p).Std(), true
		}
	case **TLSVersions:
		if *p != nil {
			return **p, true
		}
	case *[]TLSAuth:
		return *p, *p != nil
	case *[]string:
		return *p, *p != nil
	case *map[string]string:
		return *p, *p != nil
	case *[]Stage:
		return *p, *p != nil
	case *map[string][]Threshold:
		return *p, *p != nil
	case *map[string]json.RawMessage:
		return *p, *p != nil
	case *DNS:
		return *p, p.set()
	default:
		panic(fmt.Sprintf("config: option %s has an unsupported field type %T", s.name, p))
	}
	return nil, false
}

// apply copies the option from higher into r when higher sets it (see
// Options.Apply); maps and lists are copied, never shared.
func (s *spec) apply(r, higher *Options) {
	switch dst := s.field(r).(type) {
	case **int64:
		setPtr(dst, *s.field(higher).(**int64))
	case **bool:
		setPtr(dst, *s.field(higher).(**bool))
	case **string:
		setPtr(dst, *s.field(higher).(**string))
	case **duration.Duration:
		setPtr(dst, *s.field(higher).(**duration.Duration))
	case **TLSVersions:
		setPtr(dst, *s.field(higher).(**TLSVersions))
	case *[]TLSAuth:
		setClone(dst, *s.field(higher).(*[]TLSAuth), s.keepEmpty)
	case *[]string:
		setClone(dst, *s.field(higher).(*[]string), s.keepEmpty)
	case *[]Stage:
		setClone(dst, *s.field(higher).(*[]Stage), s.keepEmpty)
	case *map[string]string:
		setMap(dst, *s.field(higher).(*map[string]string), s.keepEmpty)
	case *map[string][]Threshold:
		setMap(dst, *s.field(higher).(*map[string][]Threshold), s.keepEmpty)
	case *map[string]json.RawMessage:
		setMap(dst, *s.field(higher).(*map[string]json.RawMessage), s.keepEmpty)
	case *DNS:
		dst.merge(*s.field(higher).(*DNS))
	default:
		panic(fmt.Sprintf("config: option %s has an unsupported field type %T", s.name, dst))
	}
}

func setPtr[T any](dst **T, v *T) {
	if v != nil {
		c := *v
		*dst = &c
	}
}

func setClone[T any](dst *[]T, v []T, keepEmpty bool) {
	if v != nil && (!keepEmpty || len(v) > 0) {
		*dst = slices.Clone(v)
	}
}

func setMap[V any](dst *map[string]V, v map[string]V, keepEmpty bool) {
	if v != nil && (!keepEmpty || len(v) > 0) {
		*dst = maps.Clone(v)
	}
}

// setDefault gives the option its default in o when it is unset.
func (s *spec) setDefault(o *Options) {
	if s.def == nil {
		return
	}
	if _, set := s.value(o); set {
		return
	}
	switch dst := s.field(o).(type) {
	case **int64:
		n := s.def.(int64)
		*dst = &n
	case **duration.Duration:
		d := duration.Duration(s.def.(time.Duration))
		*dst = &d
	case **string:
		v := s.def.(func() string)()
		*dst = &v
	case *[]string:
		*dst = slices.Clone(s.def.([]string))
	default:
		panic(fmt.Sprintf("config: option %s has a default of unsupported type %T", s.name, dst))
	}
}

// validate runs the option's check on its value in o, if set.
func (s *spec) validate(o *Options) error {
	if s.check == nil {
		return nil
	}
	v, ok := s.value(o)
	if !ok {
		return nil
	}
	return s.check(v)
}

func atLeast(min int64) func(any) error {
	return func(v any) error {
		if n := v.(int64); n < min {
			if min == 0 {
				return fmt.Errorf("must not be negative, got %d", n)
			}
			return fmt.Errorf("must be at least %d, got %d", min, n)
		}
		return nil
	}
}

func nonNegativeDuration(v any) error {
	if d := v.(time.Duration); d < 0 {
		return fmt.Errorf("must not be negative, got %s", d)
	}
	return nil
}

func checkHTTPDebug(v any) error {
	switch s := v.(string); s {
	case "", "headers", "full":
		return nil
	default:
		return fmt.Errorf("must be \"headers\" or \"full\", got %q", s)
	}
}

func checkExpectedInterval(v any) error {
	_, err := executor.ParseExpectedInterval(v.(string))
	return err
}

// httpDebugText lets K6_HTTP_DEBUG=true mean headers, as a bare
// --http-debug does, and false mean off.
func httpDebugText(s string) string {
	switch s {
	case "true", "1":
		return "headers"
	case "false", "0":
		return ""
	}
	return s
}
