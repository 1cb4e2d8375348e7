package cli

import (
	"runtime/debug"
	"slices"
	"testing"

	"github.com/metronome-load/metronome/extension"
)

func TestExtensionLinesNameTheModuleOfEachExtension(t *testing.T) {
	bi := &debug.BuildInfo{
		Main: debug.Module{Path: "metronome-custom"},
		Deps: []*debug.Module{
			{Path: metronomeModule, Version: "v1.2.0"},
			{Path: "example.com/ext", Version: "v0.3.1"},
			{Path: "example.com/ext/sub", Version: "v0.1.0"},
			{Path: "example.com/local", Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "/src/local"}},
			{Path: "example.com/forked", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1"}},
		},
	}
	exts := []*extension.Extension{
		{Kind: extension.JSModule, Name: "k6/http", Package: metronomeModule + "/js/modules/http"},
		{Kind: extension.JSModule, Name: "k6/x/ext", Package: "example.com/ext"},
		{Kind: extension.JSModule, Name: "k6/x/local", Package: "example.com/local/js"},
		{Kind: extension.Executor, Name: "sub-vus", Package: "example.com/ext/sub"},
		{Kind: extension.Output, Name: "forked", Package: "example.com/forked"},
		{Kind: extension.Output, Name: "unknown", Package: "example.org/not-in-build"},
		{Kind: extension.Output, Name: "late", Package: ""},
	}
	got := extensionLines(bi, exts)
	want := []string{
		"example.com/ext v0.3.1, k6/x/ext [js module]",
		"example.com/local (devel), k6/x/local [js module]",
		"example.com/ext/sub v0.1.0, sub-vus [executor]",
		"example.com/forked v1.0.1, forked [output]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("extensionLines =\n%q\nwant\n%q", got, want)
	}
}

func TestVersionOfThePlainBinaryListsNoExtensions(t *testing.T) {
	// Everything this test binary registers comes from metronome's own
	// module, so the version is the single line.
	if got := versionText(); got != versionString() {
		t.Errorf("versionText() = %q, want %q", got, versionString())
	}
}
