package prometheus

import (
	"errors"
	"strings"

	"github.com/prometheus/prometheus/prompb"
)

// errNativeDisabled replaces the server's answer when it refuses native
// histograms, with the fix in it.
var errNativeDisabled = errors.New("the server refuses native histograms: start Prometheus with --enable-feature=native-histograms (and --web.enable-remote-write-receiver), or unset K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM")

// isNativeDisabled recognises Prometheus's "native histograms are disabled"
// answer.
func isNativeDisabled(err error) bool {
	return strings.Contains(err.Error(), "native histograms are disabled")
}

// request is one push.
type request struct {
	msg *prompb.WriteRequest
	// values is the number of samples and histograms in msg.
	values int
	hist   bool
	// final marks the pushes made at stop, which are never dropped from
	// the queue and get their own time budget.
	final bool
}
