package cli

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/metronome-load/metronome/config"
)

// optionFlag is a flag that sets one option in the flags tier. pflag calls
// Set only for flags the user typed, so the tier holds exactly the options
// set on the command line, and a bad value fails while flags are parsed
// with a message naming the flag.
type optionFlag struct {
	tier   *config.Options
	option string // the option's JSON name
	typ    string // shown in --help
}

func (f *optionFlag) Set(v string) error { return f.tier.Set(f.option, v) }
func (f *optionFlag) String() string     { return "" }
func (f *optionFlag) Type() string       { return f.typ }

// listFlag is a flag of a list option that may be repeated, each value
// one or more comma-separated items (k6's --blacklist-ip and
// --block-hostnames).
type listFlag struct {
	optionFlag
	values []string
}

func (f *listFlag) Set(v string) error {
	f.values = append(f.values, v)
	return f.tier.Set(f.option, strings.Join(f.values, ","))
}

// stageFlag collects -s/--stage values: repeatable, each value one or
// more comma-separated duration:target stages.
type stageFlag struct{ tier *config.Options }

func (f *stageFlag) Set(v string) error {
	stages, err := config.ParseStages(v)
	if err != nil {
		return err
	}
	f.tier.Stages = append(f.tier.Stages, stages...)
	return nil
}
func (f *stageFlag) String() string { return "" }
func (f *stageFlag) Type() string   { return "duration:target" }

// tagFlag collects --tag name=value values; the value may hold commas.
type tagFlag struct{ tier *config.Options }

func (f *tagFlag) Set(v string) error {
	name, value, err := config.ParseTag(v)
	if err != nil {
		return err
	}
	if f.tier.Tags == nil {
		f.tier.Tags = map[string]string{}
	}
	f.tier.Tags[name] = value
	return nil
}
func (f *tagFlag) String() string { return "" }
func (f *tagFlag) Type() string   { return "name=value" }

// addOptionFlags defines the flags that set options, writing into tier.
func addOptionFlags(fs *pflag.FlagSet, tier *config.Options) {
	opt := func(name, short, option, typ, usage string) *pflag.Flag {
		fs.VarP(&optionFlag{tier: tier, option: option, typ: typ}, name, short, usage)
		return fs.Lookup(name)
	}
	boolOpt := func(name, short, option, usage string) {
		opt(name, short, option, "bool", usage).NoOptDefVal = "true"
	}
	opt("vus", "u", "vus", "int", "number of virtual users (default 1)")
	opt("duration", "d", "duration", "duration", "test duration, e.g. 30s, 5m, 1h30m")
	opt("iterations", "i", "iterations", "int", "total number of iterations, shared by the VUs")
	fs.VarP(&stageFlag{tier: tier}, "stage", "s", "a ramping stage duration:target, e.g. 30s:10 (repeatable, or comma-separated)")
	opt("summary-trend-stats", "", "summaryTrendStats", "stats", "trend columns of the summary, e.g. avg,p(95),p(99.9) (default avg,min,med,max,p(90),p(95))")
	opt("summary-time-unit", "", "summaryTimeUnit", "unit", "time unit of the summary: s, ms or us (default: automatic)")
	boolOpt("no-thresholds", "", "noThresholds", "do not evaluate thresholds")
	fs.Var(&tagFlag{tier: tier}, "tag", "a tag added to every sample, name=value (repeatable)")
	opt("system-tags", "", "systemTags", "tags", "system tags to record, comma-separated (default: k6's default set)")
	boolOpt("no-setup", "", "noSetup", "do not run setup()")
	boolOpt("no-teardown", "", "noTeardown", "do not run teardown()")
	opt("http-debug", "", "httpDebug", "headers|full", "log HTTP requests and responses: headers, or full to include bodies").NoOptDefVal = "headers"
	boolOpt("insecure-skip-tls-verify", "", "insecureSkipTLSVerify", "skip verification of TLS certificates")
	opt("max-redirects", "", "maxRedirects", "int", "how many redirects an HTTP request follows (default 10)")
	opt("user-agent", "", "userAgent", "string", "User-Agent header of HTTP requests (default metronome/<version> (k6-compatible))")
	opt("batch", "", "batch", "int", "most parallel requests of one http.batch() call (default 20)")
	opt("batch-per-host", "", "batchPerHost", "int", "most parallel requests per host in http.batch() (default 6)")
	opt("rps", "", "rps", "int", "most HTTP requests per second, across all VUs (default 0: no limit)")
	boolOpt("no-connection-reuse", "", "noConnectionReuse", "open a new connection for every HTTP request")
	boolOpt("no-vu-connection-reuse", "", "noVUConnectionReuse", "do not reuse connections between iterations")
	boolOpt("discard-response-bodies", "", "discardResponseBodies", "read and discard response bodies (responseType none by default)")
	list := func(name, option, typ, usage string) {
		fs.Var(&listFlag{optionFlag: optionFlag{tier: tier, option: option, typ: typ}}, name, usage)
	}
	list("blacklist-ip", "blacklistIPs", "CIDR", "an address range no request may reach, e.g. 10.0.0.0/8 (repeatable, or comma-separated)")
	list("block-hostnames", "blockHostnames", "pattern", "a host name no request may reach, * for any beginning, e.g. *.example.com (repeatable, or comma-separated)")
	opt("dns", "", "dns", "ttl=…,select=…,policy=…", "how names resolve: ttl inf, 0 or a duration; select first, random or roundRobin; policy preferIPv4, preferIPv6, onlyIPv4, onlyIPv6 or any (default ttl=5m,select=random,policy=preferIPv4)")
	opt("local-ips", "", "localIPs", "addresses", "local addresses VUs dial from, VU n taking the n-th in turn: addresses, ranges and CIDR blocks, e.g. 10.0.0.1-10.0.0.20,10.0.1.0/30")
	opt("min-iteration-duration", "", "minIterationDuration", "duration", "shortest time an iteration takes; faster ones sleep the rest")
	boolOpt("throw", "w", "throw", "throw errors on failed HTTP requests and bad metric values")
	opt("expected-interval", "", "expectedInterval", "auto|DURATION|off", "back-fill corrected_latency of closed-model scenarios that set no expectedInterval: auto (estimated per VU), a duration, or off (default: auto for constant-vus and ramping-vus)")
	list("latency-trends", "latencyTrends", "trend", "a custom Trend whose every sample times one operation: each also records corrected_latency, tagged metric=NAME (repeatable, or comma-separated)")
	opt("execution-segment", "", "executionSegment", "segment", "the part of the test this instance runs, e.g. 0:1/3")
	opt("execution-segment-sequence", "", "executionSegmentSequence", "sequence", "the segments of all instances, e.g. 0,1/3,2/3,1")
}
