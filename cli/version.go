package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { addCommand(newVersionCmd) }

// newVersionCmd builds `metronome version`, which prints
// "metronome v<version> (<go version>, <os>/<arch>)". The version is
// config.Version, set at build time with -ldflags.
func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show metronome's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(g.stdout, versionString())
			return err
		},
	}
}
