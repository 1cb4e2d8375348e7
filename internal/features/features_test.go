package features

import (
	"slices"
	"strings"
	"testing"
)

// The precedence k6 v2.2.0 showed (recorded 2026-12-01): --features
// replaces K6_FEATURES, which replaces the config file's list.
func TestResolvePrecedence(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  Sources
		want []string
	}{
		{"none", Sources{}, nil},
		{"config file", Sources{ConfigFile: []string{NativeHistograms}}, []string{NativeHistograms}},
		{"env beats file", Sources{ConfigFile: []string{NativeHistograms}, Env: "", EnvSet: true}, nil},
		{"env", Sources{Env: " native-histograms ,", EnvSet: true}, []string{NativeHistograms}},
		{"flag beats env", Sources{Env: NativeHistograms, EnvSet: true, Flag: []string{"freeze-env"}, FlagSet: true}, nil},
		{"flag, comma-separated and repeated", Sources{Flag: []string{"native-histograms, native-histograms"}, FlagSet: true}, []string{NativeHistograms}},
		{"legacy variable", Sources{LegacyEnv: "true"}, []string{NativeHistograms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Resolve(tc.src).Names(); !slices.Equal(got, tc.want) {
				t.Errorf("enabled %v, want %v", got, tc.want)
			}
		})
	}
}

// k6 goes on after an unknown flag, with an error-level message; metronome
// warns the same way, and says which known flags it does not implement.
func TestResolveMessages(t *testing.T) {
	s := Resolve(Sources{Flag: []string{"bogus,freeze-env,native-histograms"}, FlagSet: true, Script: true, LegacyEnv: "true"})
	if !s.Enabled(NativeHistograms) || s.Enabled("bogus") || s.Enabled("freeze-env") {
		t.Fatalf("enabled %v, want only native-histograms", s.Names())
	}
	all := strings.Join(s.Warnings, "\n")
	for _, want := range []string{`unknown feature flag "bogus"`, "known flags: freeze-env, merge-run-tags, native-histograms",
		`"freeze-env" is not implemented`, "script options are ignored", LegacyNativeHistogramsEnv} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q do not say %q", s.Warnings, want)
		}
	}
	if len(s.Info) != 1 || s.Info[0] != "experimental feature enabled: native-histograms" {
		t.Errorf("info %q", s.Info)
	}
}
