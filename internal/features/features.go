// Package features resolves k6 v2's feature flags (--features,
// K6_FEATURES, the config file's "features") into the set a run enables,
// with the messages k6 gives for them. A flag switches a behaviour that is
// not yet the default; metronome knows k6's flags and implements
// native-histograms.
package features

import (
	"slices"
	"strconv"
	"strings"
)

// NativeHistograms makes the Prometheus remote-write output send trends
// as native histograms (k6 v2.1+).
const NativeHistograms = "native-histograms"

// Flag is one feature flag as `k6 features` lists it.
type Flag struct {
	Name        string
	Lifecycle   string
	Description string
	// Implemented says whether metronome does what the flag asks.
	Implemented bool
}

// Known are the flags of k6 v2.2.0.
var Known = []Flag{
	{"freeze-env", "experimental", "freeze the __ENV object so that scripts cannot change it", false},
	{"merge-run-tags", "experimental", "merge run tags across config layers instead of replacing them", false},
	{NativeHistograms, "experimental", "send trend metrics to Prometheus remote write as native histograms", true},
}

// LegacyNativeHistogramsEnv is the variable that switched native
// histograms on before the flag existed; k6 v2 still honours it as an
// alias of the flag, with a warning.
const LegacyNativeHistogramsEnv = "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM"

// Sources are the places flags come from, in increasing precedence; the
// highest one that is set replaces the others, as in k6.
type Sources struct {
	ConfigFile []string // the config file's "features"
	Env        string   // K6_FEATURES, comma-separated
	EnvSet     bool
	Flag       []string // --features, each comma-separated, repeatable
	FlagSet    bool
	// Script is true when the script's options name features, which k6
	// ignores with a warning.
	Script bool
	// LegacyEnv is the value of LegacyNativeHistogramsEnv.
	LegacyEnv string
}

// Set is the resolved set of flags and what to tell the user.
type Set struct {
	enabled []string
	// Info are lines for an experimental flag that is on; Warnings for
	// flags that are unknown, not implemented, misplaced or legacy.
	Info, Warnings []string
}

// Resolve picks the flags of the highest source that is set.
func Resolve(src Sources) Set {
	var raw []string
	switch {
	case src.FlagSet:
		raw = splitAll(src.Flag)
	case src.EnvSet:
		raw = splitAll([]string{src.Env})
	default:
		raw = src.ConfigFile
	}
	var s Set
	if src.Script {
		s.Warnings = append(s.Warnings, "feature flags in script options are ignored, as in k6; use --features, K6_FEATURES or the config file's \"features\"")
	}
	if legacyOn(src.LegacyEnv) {
		s.Warnings = append(s.Warnings, LegacyNativeHistogramsEnv+" is the legacy switch of native histograms; use --features "+NativeHistograms+" or K6_FEATURES="+NativeHistograms)
		raw = append(raw, NativeHistograms)
	}
	for _, name := range raw {
		name = strings.TrimSpace(name)
		if name == "" || slices.Contains(s.enabled, name) {
			continue
		}
		i := slices.IndexFunc(Known, func(f Flag) bool { return f.Name == name })
		if i < 0 {
			s.Warnings = append(s.Warnings, "unknown feature flag "+quote(name)+"; known flags: "+knownNames())
			continue
		}
		f := Known[i]
		if !f.Implemented {
			s.Warnings = append(s.Warnings, "feature flag "+quote(name)+" is not implemented by metronome and is ignored")
			continue
		}
		s.enabled = append(s.enabled, name)
		s.Info = append(s.Info, f.Lifecycle+" feature enabled: "+name)
	}
	return s
}

// Enabled reports whether the flag name is on.
func (s Set) Enabled(name string) bool { return slices.Contains(s.enabled, name) }

// Names are the enabled flags, in the order given.
func (s Set) Names() []string { return slices.Clone(s.enabled) }

func splitAll(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func knownNames() string {
	names := make([]string, len(Known))
	for i, f := range Known {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

func quote(s string) string { return `"` + s + `"` }

// legacyOn reads the legacy variable; unset, empty or not a boolean is off.
func legacyOn(v string) bool {
	on, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && on
}
