package cli

import (
	"github.com/spf13/cobra"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/audit"
	"github.com/metronome-load/metronome/internal/engine"
	"github.com/metronome-load/metronome/internal/tool"
)

func init() { addCommand(newAuditCmd) }

// auditCmd holds the flags of `metronome audit`: the tool's, and the
// run's options that rebuild its scenarios.
type auditCmd struct {
	run *runCmd
	a   tool.Audit
}

// newAuditCmd declares `metronome audit` (tool.Audit): what metronome would have measured
// in a run made with stock k6, rebuilt from k6's JSON output and the
// script's options.
func newAuditCmd(g *globals) *cobra.Command {
	c := &auditCmd{run: &runCmd{g: g, tier: &config.Options{Source: "command-line flags"}}}
	cmd := &cobra.Command{
		Use:   "audit [flags] k6-output.json[.gz] script.js|archive.tar",
		Short: "Rebuild omission-free latency from the JSON output of a run made with stock k6",
		Long: `Audit reads the JSON output of a run made with stock k6 (k6 run -o json=FILE, plain
or gzipped) and the options of its script (or archive), and rebuilds what
metronome would have measured in that run: corrected_latency for every request
and schedule_lag for every iteration. Arrival-rate scenarios are rebuilt from
their schedule (each request is charged its iteration's lag, each dropped
iteration the wait until a VU was free); closed-model scenarios are back-filled
per request from each VU's cadence. Everything rebuilt is labelled as such.

It prints the summary metronome would have printed, how each scenario was
rebuilt, and k6's own figures beside the audited ones per scenario and per
request name (--json prints those rows in the shape of metronome merge
--json). --hdrlog writes the audited run's HdrHistogram log, which metronome
merge and report read, and --report its HTML report. Thresholds, the
script's and those of --threshold, are evaluated on the audited data; when
one fails the exit code is 99, as k6's.

Pass the flags and -e variables the run was made with, so the options are the
run's. k6's vu and iter metadata (--system-tags with vu and iter, besides
scenario and name) make the audit exact; docs/stock-k6.md says what is
estimated without them.`,
		Example: `  k6 run --system-tags=scenario,name,method,status,vu,iter -o json=run.json.gz script.js
  metronome audit run.json.gz script.js
  metronome audit --threshold 'corrected_latency: p(99)<250' --report audit.html run.json.gz script.js`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return exitcode.Errorf(exitcode.InvalidConfig, "audit needs k6's JSON output and the script (or archive) of the run, in that order; got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, signalled, stop := g.signalContext(cmd.Context(), readSignals)
			defer stop()
			c.a.Output, c.a.Script = args[0], args[1]
			c.a.Stdout, c.a.Stderr, c.a.Env = g.stdout, g.stderr, g.env
			c.a.NoColor = g.noColor || !isTTY(g.stdout)
			c.a.Options = c.options
			err := c.a.Run(ctx)
			if signalled() && exitcode.Of(err) != exitcode.ExternalAbort {
				// It came after the input was read: the files were
				// finished.
				err = exitcode.Errorf(exitcode.ExternalAbort, "audit: interrupted by signal; the files asked for were written whole")
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.BoolVar(&c.a.JSON, "json", false, "print the rows of k6's and the audited figures as JSON (the shape of metronome merge --json) instead of text")
	fs.StringArrayVar(&c.a.Thresholds, "threshold", nil, "a threshold evaluated on the audited data, 'METRIC[{tag:value}]: EXPRESSION', e.g. 'corrected_latency: p(99)<250' (repeatable)")
	fs.DurationVar(&c.a.Bound, "over", audit.DefaultBound, "the latency above which the tables count requests")
	fs.StringVar(&c.a.LogPath, "hdrlog", "", "write the audited run's HdrHistogram interval log to this file (for metronome merge, compare and report)")
	fs.StringVar(&c.a.ReportPath, "report", "", "write the audited run's HTML report to this file")
	addOptionFlags(fs, c.run.tier)
	fs.StringArrayVarP(&c.run.env, "env", "e", nil, "an environment variable for the script, NAME=VALUE (repeatable), as the run had it")
	fs.StringVarP(&c.run.configPath, "config", "c", "", "JSON config file holding options (env K6_CONFIG)")
	fs.BoolVar(&c.run.includeSysEnv, "include-system-env-vars", true, "pass the process environment to the script's __ENV")
	return cmd
}

// options loads the script (or archive) as inspect does and returns the
// run's consolidated options and scenarios.
func (c *auditCmd) options(path string) (*config.Options, []executor.Config, error) {
	r := c.run
	t, err := r.readTiers()
	if err != nil {
		return nil, nil, err
	}
	scriptEnv, _, err := r.scriptEnv(r.includeSysEnv)
	if err != nil {
		return nil, nil, err
	}
	lo := loadOptions{Env: scriptEnv, Stderr: r.g.stderr, Verbose: r.g.verbose}
	arch, path, err := r.fromArchive(path, &lo)
	if err != nil {
		return nil, nil, err
	}
	script, opts, err := r.loadConsolidated(t, path, arch, lo, loadScript)
	if err != nil {
		return nil, nil, err
	}
	if opts.ExecutionSegment != nil {
		return nil, nil, exitcode.Errorf(exitcode.InvalidConfig, "--execution-segment: audit rebuilds whole runs, not one instance's part of a segmented one")
	}
	cfgs, err := engine.Scenarios(opts, script)
	if err != nil {
		return nil, nil, err
	}
	return opts, cfgs, nil
}
