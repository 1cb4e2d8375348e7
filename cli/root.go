// Package cli is metronome's command line: the cobra commands (run,
// version, ...), their flags, and the translation of flags, K6_* variables
// and config files into a test run.
//
// Errors reach the user as one line, "ERROR: <message>", on stderr, and the
// process exits with the code the error carries (package exitcode); an
// error of the script that k6 logs (an exception outside an iteration, a
// script that does not load, exec.test.abort()) is logged as k6 logs it
// instead (logged, in run.go). Flag and argument mistakes exit with 104
// (invalid configuration), like bad option values; k6 exits with 255
// there.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/exitcode"
)

// globals is the state every command shares: where output goes, the
// process environment and the global flags.
type globals struct {
	stdout, stderr io.Writer
	// env is the process environment (os.Environ as a map).
	env map[string]string
	// noColor and verbose are the persistent --no-color and -v flags.
	noColor bool
	verbose bool
	// logOutput and logFormat are --log-output and --log-format.
	logOutput, logFormat string
	// args is the command line (without the program), when the process
	// runs it; automatic extension resolution hands it over as it is.
	args []string
	// started is set once a command's RunE begins; an error before that
	// is a usage mistake (unknown command or flag, wrong arguments).
	started bool
}

// stamp is the [NNNN] of a log line: whole seconds since the process
// started (processStart), at least four digits, as k6 writes them.
func (g *globals) stamp() string {
	return fmt.Sprintf("%04d", int(time.Since(processStart)/time.Second))
}

// commands are the constructors of metronome's subcommands.
//
// A command lives in its own file and registers itself from that file's
// init function:
//
//	func init() { addCommand(newMergeCmd) }
//
//	func newMergeCmd(g *globals) *cobra.Command { ... }
//
// so adding a command (cli/merge.go, cli/demo.go) never touches root.go.
// Constructors run once per NewRoot and must keep their flag state in the
// command they build (closures or a struct), never in package variables,
// so that tests can build many roots.
var commands []func(g *globals) *cobra.Command

// addCommand registers a subcommand constructor; call it from init.
func addCommand(f func(g *globals) *cobra.Command) { commands = append(commands, f) }

// NewRoot builds the metronome command with every registered subcommand,
// writing to stdout and stderr and reading the process environment.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	return newRoot(&globals{stdout: stdout, stderr: stderr, env: environ()})
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "metronome",
		Short: "Load testing for k6 scripts, with latency measured from when requests should have been sent",
		Long: "metronome runs k6-style JavaScript and TypeScript load tests with a Go-native engine.\n" +
			"It reads the same options, flags and K6_* variables as k6 and writes the same outputs,\n" +
			"and measures latency without coordinated omission (see corrected_latency).",
		Version:       versionText(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return exitcode.Wrap(exitcode.InvalidConfig, err)
	})
	root.PersistentFlags().BoolVar(&g.noColor, "no-color", false, "disable colored output")
	root.PersistentFlags().StringVar(&g.logOutput, "log-output", "", "where log lines go: stderr, stdout, none or file=PATH[,level=LEVEL] (default stderr)")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "", "layout of log lines: text, json or raw (default text)")
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "show debug output (console.debug)")
	for _, f := range commands {
		cmd := f(g)
		markStart(cmd, g)
		root.AddCommand(cmd)
	}
	return root
}

// markStart wraps the RunE of cmd and its subcommands so that g records
// when a command has begun its own work.
func markStart(cmd *cobra.Command, g *globals) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			g.started = true
			return run(c, args)
		}
	}
	for _, sub := range cmd.Commands() {
		markStart(sub, g)
	}
}

// Execute runs metronome on os.Args and returns the process exit code.
func Execute() int {
	surviveClosedStdout()
	env := environ()
	if path := env["METRONOME_CPUPROFILE"]; path != "" {
		stop, err := startCPUProfile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ERROR: METRONOME_CPUPROFILE: %v\n", err)
			return exitcode.Generic
		}
		defer stop()
	}
	if path := env["METRONOME_MEMPROFILE"]; path != "" {
		stop, err := startMemProfile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ERROR: METRONOME_MEMPROFILE: %v\n", err)
			return exitcode.Generic
		}
		defer stop()
	}
	return execute(os.Args[1:], newBoundedStdout(os.Stdout), os.Stderr, env)
}

// startCPUProfile writes a CPU profile of the whole process to path until
// the returned function is called: METRONOME_CPUPROFILE=cpu.prof, for
// profiling metronome itself under load.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// execute runs the command line args and returns the exit code. A panic
// becomes one error line and exit code 109; METRONOME_DEBUG adds the Go
// stack trace.
func execute(args []string, stdout, stderr io.Writer, env map[string]string) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "ERROR: internal error, a bug in metronome: %s\n", oneLine(fmt.Sprint(p)))
			if env["METRONOME_DEBUG"] != "" {
				_, _ = stderr.Write(debug.Stack())
			}
			code = exitcode.GoPanic
		}
	}()
	g := &globals{stdout: stdout, stderr: stderr, env: env, args: args}
	root := newRoot(g)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitcode.OK
	}
	if errors.Is(err, errReported) {
		return exitcode.Of(err)
	}
	var coded *exitcode.Error
	if !g.started && !errors.As(err, &coded) {
		err = exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	// g.stderr, which a run has made hide its secrets.
	fmt.Fprintf(g.stderr, "ERROR: %s\n", oneLine(err.Error()))
	return exitcode.Of(err)
}

// oneLine folds a message onto one line: line breaks and the indentation
// after them become single spaces.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	parts := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// environ returns the process environment as a map.
func environ() map[string]string {
	env := make(map[string]string)
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	return env
}

// processStart is when the process started (when package cli was
// initialised), the origin of log lines' elapsed seconds.
var processStart = time.Now()

func versionString() string {
	return fmt.Sprintf("metronome v%s (%s, %s/%s)", config.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
