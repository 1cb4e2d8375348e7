// Package config is the options model of a test run: every option k6
// scripts, config files, K6_* variables and flags can set, the precedence
// between those tiers, the shortcut options that become a default scenario,
// and their validation. Errors name the option path.
package config

import (
	"encoding/json"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/optdecode"
)

// Stage is one step of a ramp: reach Target over Duration. It is the
// options grammar's stage, which the ramping executors take too.
type Stage = optdecode.Stage

// Threshold is one threshold expression on a metric. In JSON it is either
// a string ("p(95)<200") or an object with abortOnFail, delayAbortEval and
// metronome's window.
type Threshold struct {
	Source         string             `json:"threshold"`
	AbortOnFail    bool               `json:"abortOnFail,omitempty"`
	DelayAbortEval *duration.Duration `json:"delayAbortEval,omitempty"`
	// Window, when set, judges the threshold on every window of this
	// length instead of on the whole run (metrics.ThresholdDef.Window).
	// k6 v2.2.0 ignores the key and judges the whole run.
	Window *duration.Duration `json:"window,omitempty"`
}

// Options is the consolidated set of options. A nil pointer (or nil map or
// slice) means "not set in this tier", which is what lets tiers be layered.
type Options struct {
	VUs        *int64             `json:"vus,omitempty"`
	Duration   *duration.Duration `json:"duration,omitempty"`
	Iterations *int64             `json:"iterations,omitempty"`
	Stages     []Stage            `json:"stages,omitempty"`
	// Scenarios holds each scenario's raw JSON; executors parse their own
	// options (executor.Type.Parse).
	Scenarios map[string]json.RawMessage `json:"scenarios,omitempty"`

	Thresholds map[string][]Threshold `json:"thresholds,omitempty"`

	SetupTimeout         *duration.Duration `json:"setupTimeout,omitempty"`
	TeardownTimeout      *duration.Duration `json:"teardownTimeout,omitempty"`
	HandleSummaryTimeout *duration.Duration `json:"handleSummaryTimeout,omitempty"`
	NoSetup              *bool              `json:"noSetup,omitempty"`
	NoTeardown           *bool              `json:"noTeardown,omitempty"`

	SummaryTrendStats []string `json:"summaryTrendStats,omitempty"`
	SummaryTimeUnit   *string  `json:"summaryTimeUnit,omitempty"`
	NoThresholds      *bool    `json:"noThresholds,omitempty"`

	Tags       map[string]string `json:"tags,omitempty"`
	SystemTags []string          `json:"systemTags,omitempty"`

	MaxRedirects          *int64  `json:"maxRedirects,omitempty"`
	UserAgent             *string `json:"userAgent,omitempty"`
	InsecureSkipTLSVerify *bool   `json:"insecureSkipTLSVerify,omitempty"`
	// The TLS of the test's connections (HTTP, WebSocket, gRPC; see
	// TLSConfig): the versions allowed, the TLS 1.0–1.2 cipher suites
	// offered, by k6's names, and the client certificates.
	TLSVersion            *TLSVersions `json:"tlsVersion,omitempty"`
	TLSCipherSuites       []string     `json:"tlsCipherSuites,omitempty"`
	TLSAuth               []TLSAuth    `json:"tlsAuth,omitempty"`
	DiscardResponseBodies *bool        `json:"discardResponseBodies,omitempty"`
	Batch                 *int64       `json:"batch,omitempty"`
	BatchPerHost          *int64       `json:"batchPerHost,omitempty"`
	// RPS limits the instance's HTTP requests per second across all VUs;
	// unset, 0 or negative means no limit, as in k6.
	RPS                  *int64             `json:"rps,omitempty"`
	NoConnectionReuse    *bool              `json:"noConnectionReuse,omitempty"`
	NoVUConnectionReuse  *bool              `json:"noVUConnectionReuse,omitempty"`
	NoCookiesReset       *bool              `json:"noCookiesReset,omitempty"`
	MinIterationDuration *duration.Duration `json:"minIterationDuration,omitempty"`
	Throw                *bool              `json:"throw,omitempty"`
	// HTTPDebug is "", "headers" or "full".
	HTTPDebug *string `json:"httpDebug,omitempty"`

	// The network fence of the test's connections (package dialer):
	// address ranges in CIDR notation and host name patterns no request
	// may reach, and names pinned to addresses.
	BlacklistIPs   []string          `json:"blacklistIPs,omitempty"`
	BlockHostnames []string          `json:"blockHostnames,omitempty"`
	Hosts          map[string]string `json:"hosts,omitempty"`
	// DNS is how names become addresses, LocalIPs the local addresses
	// VUs dial from (see DNS and dialer.ParseIPPool; Network builds
	// both for a run). k6 reads localIPs only from K6_LOCAL_IPS and
	// --local-ips.
	DNS      DNS     `json:"dns"`
	LocalIPs *string `json:"localIPs,omitempty"`

	// ExpectedInterval is metronome's test-wide default for the
	// expectedInterval of closed-model scenarios that set none: "auto",
	// "off" or a duration (see executor.ParseExpectedInterval). Unset, each
	// executor's own default applies.
	ExpectedInterval *string `json:"expectedInterval,omitempty"`
	// LatencyTrends names the custom Trend metrics (of time) whose every
	// sample is one operation's own time: each such sample also records
	// corrected_latency, tagged metric=NAME (executor.LatencyRecorder).
	LatencyTrends []string `json:"latencyTrends,omitempty"`

	ExecutionSegment         *string `json:"executionSegment,omitempty"`
	ExecutionSegmentSequence *string `json:"executionSegmentSequence,omitempty"`

	// Source names the tier these options came from ("script options",
	// "environment", a config file ...); errors and warnings quote it.
	Source string `json:"-"`
	// Warnings are notes gathered while consolidating (a tier overriding
	// the scenarios of a lower one, an explicitly empty stages list ...),
	// for the CLI to log before the run.
	Warnings []string `json:"-"`

	// network is the run's Network once Consolidate made these options
	// (see Network).
	network *networkMemo

	// shortcutSource is the Source of the tier that last set any of
	// duration, iterations, stages or scenarios: conflicts between them
	// can only come from one tier, so errors can name it.
	shortcutSource string
}
