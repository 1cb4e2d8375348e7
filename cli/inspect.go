package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/engine"
)

func init() { addCommand(newInspectCmd) }

// newInspectCmd is `metronome inspect`: the script's consolidated options
// as JSON on stdout, and with --execution-requirements the VUs and time the
// test needs, which k6-operator reads before it starts the runners.
func newInspectCmd(g *globals) *cobra.Command {
	r := &runCmd{g: g, tier: &config.Options{Source: "command-line flags"}}
	var reqs bool
	cmd := &cobra.Command{
		Use:   "inspect [flags] script.js|script.ts|archive.tar",
		Short: "Print a script's consolidated options as JSON",
		Long: "Print the options a run of the script would use, as JSON on stdout (console output\n" +
			"and warnings go to stderr). --execution-requirements adds maxVUs and totalDuration.",
		Args: oneScript("inspect needs exactly one script"),
		RunE: func(cmd *cobra.Command, args []string) error { return r.inspect(args[0], reqs) },
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	addOptionFlags(fs, r.tier)
	fs.BoolVar(&reqs, "execution-requirements", false, "add maxVUs and totalDuration, what the test needs (k6-operator reads them)")
	fs.StringArrayVarP(&r.env, "env", "e", nil, "an environment variable for the script, NAME=VALUE (repeatable)")
	fs.StringVarP(&r.configPath, "config", "c", "", "JSON config file holding options (env K6_CONFIG)")
	fs.BoolVar(&r.includeSysEnv, "include-system-env-vars", true, "pass the process environment to the script's __ENV")
	return cmd
}

func (r *runCmd) inspect(path string, reqs bool) error {
	g := r.g
	t, err := r.readTiers()
	if err != nil {
		return err
	}
	scriptEnv, _, err := r.scriptEnv(r.includeSysEnv)
	if err != nil {
		return err
	}
	// The init context's console lines go where --log-output says and
	// look as run's do, as in k6.
	logs, err := g.logSink(nil)
	if err != nil {
		return err
	}
	defer logs.Close()
	lo := loadOptions{Env: scriptEnv, Stderr: g.stderr, Log: logs, Verbose: g.verbose}
	arch, path, err := r.fromArchive(path, &lo)
	if err != nil {
		return err
	}
	script, opts, err := r.loadConsolidated(t, path, arch, lo, loadScript)
	if err != nil {
		return logged(err, logs)
	}
	raw, err := json.Marshal(opts)
	if err != nil {
		return exitcode.Errorf(exitcode.Generic, "encoding the options: %v", err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return exitcode.Errorf(exitcode.Generic, "encoding the options: %v", err)
	}
	if reqs {
		cfgs, err := engine.Scenarios(opts, script)
		if err != nil {
			return err
		}
		vus, total := engine.Requirements(cfgs)
		out["maxVUs"] = vus
		out["totalDuration"] = total.String()
		if _, ok := out["scenarios"]; !ok {
			if sc, err := opts.ResolveScenarios(); err == nil {
				out["scenarios"] = sc
			}
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return exitcode.Errorf(exitcode.Generic, "encoding the options: %v", err)
	}
	fmt.Fprintf(g.stdout, "%s\n", b)
	return nil
}
