package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/extension"
)

func init() { addCommand(newVersionCmd) }

// newVersionCmd builds `metronome version`, which prints
// "metronome v<version> (<go version>, <os>/<arch>)" and, in a binary with
// extensions from other Go modules, one line per extension naming its
// module and the module's version. The version is config.Version, set at
// build time with -ldflags.
func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show metronome's version and the extensions built in",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(g.stdout, versionText())
			return err
		},
	}
}

// versionText is the version line followed by the extension lines.
func versionText() string {
	bi, _ := debug.ReadBuildInfo()
	lines := extensionLines(bi, extension.All())
	if len(lines) == 0 {
		return versionString()
	}
	return versionString() + "\nExtensions:\n  " + strings.Join(lines, "\n  ")
}

// metronomeModule is metronome's own module path; what it registers is
// built in, not an extension.
const metronomeModule = "github.com/metronome-load/metronome"

// extensionLines describes each extension that a module other than
// metronome registered, as "MODULE VERSION, NAME [KIND]". The module is
// the one of the binary's modules (bi) that holds the registering package;
// a module replaced by a local directory shows "(devel)" as its version.
func extensionLines(bi *debug.BuildInfo, exts []*extension.Extension) []string {
	if bi == nil {
		return nil
	}
	mods := append([]*debug.Module{&bi.Main}, bi.Deps...)
	var lines []string
	for _, e := range exts {
		m := moduleOf(mods, e.Package)
		if m == nil || m.Path == metronomeModule {
			continue
		}
		version := m.Version
		if r := m.Replace; r != nil {
			version = r.Version
		}
		if version == "" {
			version = "(devel)"
		}
		lines = append(lines, fmt.Sprintf("%s %s, %s [%s]", m.Path, version, e.Name, e.Kind))
	}
	return lines
}

// moduleOf returns the module of mods whose path is the longest prefix of
// the package path pkg, or nil.
func moduleOf(mods []*debug.Module, pkg string) *debug.Module {
	var best *debug.Module
	for _, m := range mods {
		if m == nil || m.Path == "" {
			continue
		}
		if (pkg == m.Path || strings.HasPrefix(pkg, m.Path+"/")) && (best == nil || len(m.Path) > len(best.Path)) {
			best = m
		}
	}
	return best
}
