package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/dialer"
	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/optdecode"
)

// DefaultSystemTags are the system tags enabled when no tier sets
// systemTags, as in k6.
var DefaultSystemTags = []string{
	"proto", "subproto", "status", "method", "url", "name", "group", "check",
	"error", "error_code", "tls_version", "scenario", "service", "expected_response",
}

// SystemTags are every system tag name systemTags may list: the default
// set plus the ones k6 leaves off by default.
var SystemTags = append(slices.Clone(DefaultSystemTags), "vu", "iter", "ocsp_status", "ip")

// DefaultSummaryTrendStats are the Trend columns of the end-of-test summary
// when no tier sets summaryTrendStats.
var DefaultSummaryTrendStats = []string{"avg", "min", "med", "max", "p(90)", "p(95)"}

// maxStageTarget is the largest VU target a stage may ask for (k6's limit).
const maxStageTarget = 100_000_000

// subError is a check failure inside a structured option: sub is the
// path below the option (".http_req_duration[0]", "[2].target").
type subError struct {
	sub string
	err error
}

func (e *subError) Error() string { return e.sub + ": " + e.err.Error() }
func (e *subError) Unwrap() error { return e.err }

func at(sub, format string, args ...any) error {
	return &subError{sub: sub, err: fmt.Errorf(format, args...)}
}

// optionError names the option a check failed on. JSON sources get the
// full path (options.stages[1].target); textual sources (K6_* variables,
// flags) get their own name, since the value the user typed is flat.
func optionError(name, path string, textual bool, err error) error {
	var se *subError
	if errors.As(err, &se) {
		if textual {
			return exitcode.Errorf(exitcode.InvalidConfig, "%s: %v", name, se.err)
		}
		return exitcode.Errorf(exitcode.InvalidConfig, "%s%s: %v", path, se.sub, se.err)
	}
	if textual {
		return exitcode.Errorf(exitcode.InvalidConfig, "%s: %v", name, err)
	}
	return exitcode.Errorf(exitcode.InvalidConfig, "%s: %v", path, err)
}

// ValidTrendStat reports whether s is a summary trend column: avg, min,
// med, max, count or p(N) with 0 ≤ N ≤ 100.
func ValidTrendStat(s string) bool {
	switch s {
	case "avg", "min", "med", "max", "count":
		return true
	}
	inner, ok := strings.CutPrefix(s, "p(")
	if !ok {
		return false
	}
	inner, ok = strings.CutSuffix(inner, ")")
	if !ok || inner == "" {
		return false
	}
	for _, c := range inner {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	p, err := strconv.ParseFloat(inner, 64)
	return err == nil && p >= 0 && p <= 100
}

func checkTrendStats(v any) error {
	for i, s := range v.([]string) {
		if !ValidTrendStat(s) {
			return at(fmt.Sprintf("[%d]", i), "unknown trend stat %q; use avg, min, med, max, count or p(N) with N from 0 to 100", s)
		}
	}
	return nil
}

func checkTimeUnit(v any) error {
	switch s := v.(string); s {
	case "", "s", "ms", "us":
		return nil
	default:
		return fmt.Errorf("unknown time unit %q; use s, ms or us", s)
	}
}

func checkSystemTags(v any) error {
	for i, s := range v.([]string) {
		if !slices.Contains(SystemTags, s) {
			return at(fmt.Sprintf("[%d]", i), "unknown system tag %q; known: %s", s, strings.Join(SystemTags, ", "))
		}
	}
	return nil
}

// checkLatencyTrends checks what options.latencyTrends can be checked for
// before the script's init context ran: each entry is a metric name, not
// a threshold-style selector, and not a metric metronome defines itself.
// That each names a Trend of time the script or an extension defined is
// checked once the first VU is initialised (executor.ResolveLatencyTrends).
func checkLatencyTrends(v any) error {
	for i, name := range v.([]string) {
		sub := fmt.Sprintf("[%d]", i)
		switch {
		case strings.Contains(name, "{"):
			return at(sub, "%q is not a metric name: name the whole Trend, without a tag selector", name)
		case !metrics.ValidName(name):
			return at(sub, "%q is not a metric name (a letter or '_', then 1 to 128 letters, digits or '_')", name)
		case slices.Contains(metrics.RequestDurationNames, name):
			return at(sub, "%q already records corrected_latency: k6/http, gRPC and WebSocket connects record it for each request themselves; "+
				"name the custom Trend a script or an extension times its own operations with", name)
		case metrics.IsBuiltinName(name):
			return at(sub, "%q is a built-in metric, not an operation's own time; name the custom Trend a script or an extension times its own operations with", name)
		}
	}
	return nil
}

func checkIPRanges(v any) error {
	for i, s := range v.([]string) {
		if _, err := dialer.ParseIPRange(s); err != nil {
			return at(fmt.Sprintf("[%d]", i), "%v", err)
		}
	}
	return nil
}

func checkHostnamePatterns(v any) error {
	for i, s := range v.([]string) {
		if err := dialer.CheckHostnamePattern(s); err != nil {
			return at(fmt.Sprintf("[%d]", i), "%v", err)
		}
	}
	return nil
}

func checkHosts(v any) error {
	m := v.(map[string]string)
	for _, k := range sortedKeys(m) {
		if err := dialer.CheckHost(k, m[k]); err != nil {
			return err
		}
	}
	return nil
}

func checkTags(v any) error {
	for k := range v.(map[string]string) {
		if strings.TrimSpace(k) == "" {
			return errors.New("a tag name must not be empty")
		}
	}
	return nil
}

func checkStages(v any) error {
	if err := optdecode.CheckStages("", v.([]Stage), maxStageTarget); err != nil {
		var oe *optdecode.Error
		if errors.As(err, &oe) {
			return &subError{sub: oe.Path, err: errors.New(oe.Msg)}
		}
		return err
	}
	return nil
}

func checkThresholds(v any) error {
	m := v.(map[string][]Threshold)
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if strings.TrimSpace(name) == "" {
			return errors.New("a threshold needs a metric name")
		}
		for i, t := range m[name] {
			if strings.TrimSpace(t.Source) == "" {
				return at(fmt.Sprintf(".%s[%d]", name, i), "empty threshold expression")
			}
			if t.DelayAbortEval != nil && *t.DelayAbortEval < 0 {
				return at(fmt.Sprintf(".%s[%d].delayAbortEval", name, i), "must not be negative, got %s", *t.DelayAbortEval)
			}
		}
	}
	return nil
}

// Validate checks every option's value (not the combination of the
// shortcut options, which ResolveScenarios checks). Errors carry exit code
// 104 and name the option path, such as options.summaryTimeUnit.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	for i := range specs {
		s := &specs[i]
		if err := s.validate(o); err != nil {
			return optionError(s.name, "options."+s.name, false, err)
		}
	}
	return nil
}
