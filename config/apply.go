package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Version is metronome's version, set at build time with
// -ldflags "-X github.com/metronome-load/metronome/config.Version=1.2.3".
// It lives here because the default userAgent quotes it.
var Version = "0.1.0-dev"

// The defaults Consolidate fills in for options no tier set.
const (
	DefaultSetupTimeout         = 60 * time.Second
	DefaultTeardownTimeout      = 60 * time.Second
	DefaultHandleSummaryTimeout = 120 * time.Second
	DefaultMaxRedirects         = 10
	DefaultBatch                = 20
	DefaultBatchPerHost         = 6
)

// DefaultUserAgent is the User-Agent of HTTP requests when no tier sets
// userAgent.
func DefaultUserAgent() string {
	return "metronome/" + Version + " (k6-compatible)"
}

// Apply layers higher over o and returns the result; neither input is
// modified. An option set in higher replaces o's; maps (tags, thresholds,
// scenarios) and lists are replaced whole, never merged (tags only when
// higher's map is non-empty, as in k6).
//
// As in k6, a tier that sets any of duration, iterations, stages or
// scenarios wipes all four from the tiers below, so that
// `-i 10` on the command line replaces a script's stages instead of
// conflicting with them. metronome's reading of k6 v2.1's "bare vus"
// rule adds one case: a tier that sets vus and none of the four wipes the
// scenarios of the tiers below (but keeps their duration, iterations and
// stages), so `--vus 10` against a script with scenarios runs 10 VUs × 10
// iterations, while vus next to scenarios in the same tier is ignored.
func (o *Options) Apply(higher *Options) *Options {
	var r Options
	if o != nil {
		r = *o
		r.Warnings = slices.Clone(o.Warnings)
		r.network = nil // built from the new options, not shared with o's
	}
	if higher == nil {
		return &r
	}
	h := higher
	shortcuts := false
	for i := range specs {
		if specs[i].shortcut {
			if _, set := specs[i].value(h); set {
				shortcuts = true
			}
		}
	}
	if shortcuts {
		r.Duration, r.Iterations, r.Stages, r.Scenarios = nil, nil, nil, nil
		r.shortcutSource = h.Source
	} else if h.VUs != nil && r.Scenarios != nil {
		r.Scenarios = nil
	}
	for i := range specs {
		specs[i].apply(&r, h)
	}
	return &r
}

// Consolidate layers the tiers from lowest to highest precedence — in k6's
// order: config file, script options, K6_* environment, command-line
// flags; nil tiers are skipped — fills in the defaults for what no tier
// set, and validates the result. Warnings (scenarios overridden by a
// higher tier, explicitly empty stages or scenarios) are collected in the
// result's Warnings. Errors carry exit code 104.
func Consolidate(tiers ...*Options) (*Options, error) {
	r := &Options{Source: "consolidated options"}
	for _, t := range tiers {
		if t == nil {
			continue
		}
		if r.Scenarios != nil {
			if w := overrideWarning(r, t); w != "" {
				r.Warnings = append(r.Warnings, w)
			}
		}
		r = r.Apply(t)
		r.Warnings = append(r.Warnings, t.Warnings...)
	}
	r.Source = "consolidated options"
	applyDefaults(r)
	if err := r.Validate(); err != nil {
		return nil, err
	}
	r.Warnings = append(r.Warnings, shortcutWarnings(r)...)
	r.Warnings = append(r.Warnings, tlsWarnings(r)...)
	r.network = &networkMemo{}
	return r, nil
}

// overrideWarning says when tier t replaces the scenarios r holds.
func overrideWarning(r, t *Options) string {
	var set []string
	for _, f := range []struct {
		name string
		on   bool
	}{
		{"duration", t.Duration != nil},
		{"iterations", t.Iterations != nil},
		{"stages", t.Stages != nil},
		{"scenarios", t.Scenarios != nil},
	} {
		if f.on {
			set = append(set, f.name)
		}
	}
	if len(set) == 0 && t.VUs != nil {
		set = []string{"vus"}
	}
	if len(set) == 0 {
		return ""
	}
	from := ""
	if r.shortcutSource != "" {
		from = " from " + r.shortcutSource
	}
	by := ""
	if t.Source != "" {
		by = " in " + t.Source
	}
	return fmt.Sprintf("the scenarios%s are replaced by %s set%s", from, strings.Join(set, ", "), by)
}

// applyDefaults gives every option no tier set its default from the
// option table.
func applyDefaults(o *Options) {
	for i := range specs {
		specs[i].setDefault(o)
	}
}
