// Command metronome runs k6-style load tests. See package cli for the
// commands and package builtin for what is compiled in.
package main

import (
	"os"

	_ "github.com/metronome-load/metronome/builtin"
	"github.com/metronome-load/metronome/cli"
)

func main() { os.Exit(cli.Execute()) }
