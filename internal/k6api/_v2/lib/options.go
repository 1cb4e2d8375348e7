package lib

import (
	"fmt"
	"net"

	"gopkg.in/guregu/null.v3"

	"go.k6.io/k6/v2/lib/types"
	"go.k6.io/k6/v2/metrics"
)

// Options are the test's consolidated options, those an extension may
// read; an unset option is not Valid.
type Options struct {
	VUs        null.Int           `json:"vus"`
	Duration   types.NullDuration `json:"duration"`
	Iterations null.Int           `json:"iterations"`

	NoSetup              null.Bool          `json:"noSetup"`
	SetupTimeout         types.NullDuration `json:"setupTimeout"`
	NoTeardown           null.Bool          `json:"noTeardown"`
	TeardownTimeout      types.NullDuration `json:"teardownTimeout"`
	HandleSummaryTimeout types.NullDuration `json:"handleSummaryTimeout"`

	RPS          null.Int    `json:"rps"`
	MaxRedirects null.Int    `json:"maxRedirects"`
	UserAgent    null.String `json:"userAgent"`
	Batch        null.Int    `json:"batch"`
	BatchPerHost null.Int    `json:"batchPerHost"`
	HTTPDebug    null.String `json:"httpDebug"`

	InsecureSkipTLSVerify null.Bool `json:"insecureSkipTLSVerify"`
	Throw                 null.Bool `json:"throw"`

	Thresholds       map[string]metrics.Thresholds `json:"thresholds"`
	BlacklistIPs     []*IPNet                      `json:"blacklistIPs"`
	BlockedHostnames types.NullHostnameTrie        `json:"blockHostnames"`

	NoConnectionReuse    null.Bool          `json:"noConnectionReuse"`
	NoVUConnectionReuse  null.Bool          `json:"noVUConnectionReuse"`
	MinIterationDuration types.NullDuration `json:"minIterationDuration"`

	SummaryTrendStats []string              `json:"summaryTrendStats"`
	SummaryTimeUnit   null.String           `json:"summaryTimeUnit"`
	SystemTags        *metrics.SystemTagSet `json:"systemTags"`
	RunTags           map[string]string     `json:"tags"`

	NoCookiesReset        null.Bool `json:"noCookiesReset"`
	DiscardResponseBodies null.Bool `json:"discardResponseBodies"`
}

// IPNet is an address range of blacklistIPs.
type IPNet struct {
	net.IPNet
}

// UnmarshalText reads a range in CIDR notation.
func (ipnet *IPNet) UnmarshalText(b []byte) error {
	n, err := ParseCIDR(string(b))
	if err != nil {
		return fmt.Errorf("failed to parse CIDR '%s': %w", string(b), err)
	}
	*ipnet = *n
	return nil
}

// MarshalText writes the range in CIDR notation.
func (ipnet IPNet) MarshalText() ([]byte, error) { return []byte(ipnet.String()), nil }

// ParseCIDR reads a range in CIDR notation.
func ParseCIDR(s string) (*IPNet, error) {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		return nil, err
	}
	return &IPNet{IPNet: *n}, nil
}
