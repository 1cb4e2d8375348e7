// Command metronome-counter is metronome with the example extensions of
// package counter compiled in: the k6/x/counter module, the pacing-vus
// executor and the counts output. It is the whole of a custom build: one
// blank import for the built-ins, one per extension, and the standard main.
//
//	go build -o metronome-counter ./examples/extension/cmd/metronome-counter
//	./metronome-counter run -o counts=counts.txt examples/extension/counter/example.js
package main

import (
	"os"

	_ "github.com/metronome-load/metronome/builtin"
	"github.com/metronome-load/metronome/cli"

	_ "github.com/metronome-load/metronome/examples/extension/counter"
)

func main() { os.Exit(cli.Execute()) }
