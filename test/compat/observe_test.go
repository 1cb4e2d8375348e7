package compat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// observation is what one run of a script showed, reduced to the facts the
// suite compares: everything in it is the same on every run of a
// deterministic script, with server addresses replaced by BASE.
type observation struct {
	ExitCode int                   `json:"exit_code"`
	Metrics  map[string]*metricObs `json:"metrics"`
	// Checks maps a check's path ("::group::name") to its passes and fails.
	Checks map[string][2]float64 `json:"checks,omitempty"`
	// Groups lists the group paths of the export's root_group tree.
	Groups    []string `json:"groups,omitempty"`
	SetupData any      `json:"setup_data,omitempty"`
	// SummaryShape is the handleSummary data reduced to its key paths and
	// value types, for scripts whose handleSummary writes it to HS_OUT.
	SummaryShape []string `json:"handle_summary_shape,omitempty"`
	// ExportShape is a machine-readable --summary-export file
	// (--new-machine-readable-summary) reduced the same way.
	ExportShape []string `json:"export_shape,omitempty"`
	// Messages are the error and warning lines of stderr, as "error: …"
	// and "warning: …" without the log format's decoration, the
	// location of an error or the name of a JavaScript error, for scripts
	// with a "// compat:messages" line.
	Messages []string `json:"messages,omitempty"`
	// Loki is what the stand-in Loki got from a script whose --log-output
	// pushes to it, reduced by takeLoki.
	Loki []string `json:"loki,omitempty"`
	// Console are the console lines of stderr as written, less their
	// time="…", for scripts with a "// compat:console" line: the log
	// layout and the notation of console arguments.
	Console []string `json:"console,omitempty"`
	// Log are the log lines of stderr (logfmt or JSON) as written, less
	// their time, with request ids as UUID, Date headers as DATE, the
	// corpus folder in a file URL as file:///CORPUS/ and gRPC's debug
	// lines normalised (logVariable, sortMetadata), for scripts with a
	// "// compat:log" line: all of them, or those holding the field the
	// line names ("// compat:log source=http-debug").
	Log    []string `json:"log,omitempty"`
	stderr string
}

// metricObs is one metric as the JSON output and --summary-export show it.
type metricObs struct {
	Type     string `json:"type,omitempty"`
	Contains string `json:"contains,omitempty"`
	// Samples is the number of Point lines in the JSON output; not kept
	// for the periodic vus and vus_max gauges.
	Samples int `json:"samples"`
	// Count is a counter's total (not kept for the byte counters, whose
	// headers differ by User-Agent); Passes and Fails a rate's; Value a
	// gauge's last value (not kept for vus).
	Count  *float64 `json:"count,omitempty"`
	Passes *float64 `json:"passes,omitempty"`
	Fails  *float64 `json:"fails,omitempty"`
	Value  *float64 `json:"value,omitempty"`
	// Values are the export's stats of a trend that does not hold time:
	// what a script added, so they are deterministic.
	Values map[string]float64 `json:"values,omitempty"`
	// Stats are the export's stat names for the metric.
	Stats      []string        `json:"export_stats,omitempty"`
	Thresholds map[string]bool `json:"thresholds,omitempty"`
	// Tags are the distinct tag sets of the metric's samples, each as
	// sorted k=v pairs joined by commas.
	Tags []string `json:"tags,omitempty"`
}

// periodic are the gauges k6 samples once a second rather than on events.
var periodic = map[string]bool{"vus": true, "vus_max": true}

// metronomeOnly are metrics metronome adds to k6's (docs/metrics.md, "The metrics
// metronome adds" and "Generator health"); they are left out before comparing.
var metronomeOnly = map[string]bool{"corrected_latency": true, "schedule_lag": true,
	"generator_cpu": true, "generator_sched_latency": true, "generator_gc_pause": true,
	"generator_late_wakeup": true, "generator_late_for_vu": true, "generator_limited": true}

// script is one corpus entry and the way it is run.
type script struct {
	name string   // file name, e.g. 001-get.js
	path string   // path from the package directory
	args []string // from "// compat:args" lines
	env  []string // from "// compat:env" lines
	// handleSummary is true when the script writes handleSummary's data
	// to __ENV.HS_OUT.
	handleSummary bool
	// messages is true when the script has a "// compat:messages" line:
	// its run's error and warning lines are compared; console when it
	// has a "// compat:console" line: its console lines are; log when it
	// has a "// compat:log" line: its log lines as written, those of the
	// field logField ("source=http-debug") when the line names one.
	messages, console, log bool
	logField               string
	// named is true when the script reaches the named server
	// ("// compat:named"), etcHosts when it also needs its names
	// ("// compat:etc-hosts"); see names_test.go.
	named, etcHosts bool
}

// loadScript reads a corpus script's compat: header lines.
func loadScript(name string) (script, error) {
	s := script{name: name, path: filepath.Join("corpus", name)}
	src, err := os.ReadFile(s.path)
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "// compat:args "); ok {
			s.args = append(s.args, strings.Fields(rest)...)
		}
		if rest, ok := strings.CutPrefix(line, "// compat:log"); ok && (rest == "" || rest[0] == ' ') {
			s.log, s.logField = true, strings.TrimSpace(rest)
		}
		if rest, ok := strings.CutPrefix(line, "// compat:env "); ok {
			// Each item is NAME=value; ${NAME} in a value is an
			// endpoint's URL.
			s.env = append(s.env, strings.Fields(rest)...)
		}
	}
	s.handleSummary = bytes.Contains(src, []byte("__ENV.HS_OUT"))
	s.messages = bytes.Contains(src, []byte("\n// compat:messages\n"))
	s.console = bytes.Contains(src, []byte("\n// compat:console\n"))
	s.named = bytes.Contains(src, []byte("\n// compat:named\n"))
	s.etcHosts = bytes.Contains(src, []byte("\n// compat:etc-hosts\n"))
	return s, nil
}

// observe runs bin (metronome or k6) on the script against the loopback
// servers eps and reduces the run to an observation.
func observe(t *testing.T, bin string, s script, eps []endpoint) *observation {
	t.Helper()
	dir := t.TempDir()
	exp, out, hs := filepath.Join(dir, "export.json"), filepath.Join(dir, "out.json"), filepath.Join(dir, "summary.json")
	// No REST API: its default port is one per machine, and metronome
	// exits 106 when another run holds it.
	args := []string{"run", "--quiet", "--no-color", "--address=", "--summary-export", exp, "-o", "json=" + out,
		"-e", "HS_OUT=" + hs}
	for _, ep := range eps {
		args = append(args, "-e", ep.name+"="+ep.url)
	}
	for _, a := range s.args {
		args = append(args, expandEndpoints(a, eps))
	}
	args = append(args, s.name)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := namedCommand(ctx, t, s, bin, args)
	cmd.Dir = "corpus"
	cmd.Env = hermeticEnv(dir)
	for _, kv := range s.env {
		// ${NAME} is an endpoint's URL (HTTP_PROXY=${PROXY}).
		cmd.Env = append(cmd.Env, expandEndpoints(kv, eps))
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &stderr
	err := cmd.Run()
	o := &observation{Metrics: map[string]*metricObs{}, stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s %s did not finish within 90 s\nstderr:\n%s", filepath.Base(bin), s.name, o.stderr)
	case errors.As(err, &ee):
		o.ExitCode = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %s: %v", filepath.Base(bin), s.name, err)
	}
	norm := normalizer(eps)
	if err := o.readJSONOutput(out, norm); err != nil {
		t.Fatalf("%s %s: JSON output: %v", filepath.Base(bin), s.name, err)
	}
	if err := o.readExport(exp, norm); err != nil {
		t.Fatalf("%s %s: summary export: %v", filepath.Base(bin), s.name, err)
	}
	if s.messages {
		for _, m := range messages(o.stderr) {
			o.Messages = append(o.Messages, norm(m)) // a warning may name a server
		}
	}
	if s.console {
		for _, l := range strings.Split(o.stderr, "\n") {
			if m := consoleLine.FindStringSubmatch(l); m != nil {
				o.Console = append(o.Console, norm(m[1]))
			}
		}
	}
	if s.log {
		o.Log = logLines(o.stderr, s.logField, norm)
	}
	o.Loki = takeLoki(s.args, o.stderr)
	if s.handleSummary {
		if raw, err := os.ReadFile(hs); err == nil {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatalf("%s %s: handleSummary output is not JSON: %v", filepath.Base(bin), s.name, err)
			}
			o.SummaryShape = shape(v)
		}
	}
	return o
}

// expandEndpoints replaces ${NAME} in a "// compat:args" or "// compat:env"
// value with the URL of the loopback server NAME, for settings that name
// a server (--secret-source=url=urlTemplate=${BASE}/secret/plain/{key}).
func expandEndpoints(arg string, eps []endpoint) string {
	for _, ep := range eps {
		arg = strings.ReplaceAll(arg, "${"+ep.name+"}", ep.url)
	}
	return arg
}

// normalizer returns the function that rewrites a value seen in a run
// into one that is the same on every run: the servers' URLs become their
// names (http://127.0.0.1:40000 is BASE), their host:port the name with
// HOST for BASE (HOST, TLS_HOST) or _HOST added, and the moments in x509's
// validity errors TIME.
func normalizer(eps []endpoint) func(string) string {
	var pairs []string
	for _, ep := range eps {
		if !ep.value {
			pairs = append(pairs, ep.url, ep.name)
		}
	}
	for _, ep := range eps {
		if ep.value {
			continue
		}
		host := strings.Replace(ep.name, "BASE", "HOST", 1)
		if host == ep.name {
			host += "_HOST"
		}
		_, hostPort, _ := strings.Cut(ep.url, "://")
		pairs = append(pairs, hostPort, host)
	}
	r := strings.NewReplacer(pairs...)
	return func(s string) string {
		return certTime.ReplaceAllString(r.Replace(s), "current time TIME is $1 TIME")
	}
}

// certTime matches the moments in x509's "certificate has expired or is
// not yet valid: current time … is after …".
var certTime = regexp.MustCompile(`current time \S+ is (after|before) [0-9TZ:.+-]+`)

// k6Line is a log line of level error or warning (logfmt), k6's or
// metronome's; mLine one of metronome's errors that end a run, "ERROR:
// …"; at is the location that starts them ("script.js:1:1: ");
// consoleLine a console line of either, less its time.
var (
	k6Line      = regexp.MustCompile(`level=(error|warning) msg="((?:[^"\\]|\\.)*)"`)
	mLine       = regexp.MustCompile(`^ERROR: (.*)$`)
	at          = regexp.MustCompile(`^\S+?:\d+:\d+: `)
	consoleLine = regexp.MustCompile(`^time="[^"]*" (level=.* source=console)$`)
)

// logLines are the log lines of stderr, logfmt (`time="…" level=…`) or
// JSON (`{"…`), that hold field ("key=value") when it is not empty, less
// their time and normalised by norm and logVariable.
func logLines(stderr, field string, norm func(string) string) []string {
	k, v, _ := strings.Cut(field, "=")
	logfmt, js := " "+field, fmt.Sprintf("%q:%q", k, v)
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(l, `time="`) && !strings.HasPrefix(l, "{") {
			continue
		}
		if field != "" && !strings.Contains(l, logfmt) && !strings.Contains(l, js) {
			continue
		}
		out = append(out, norm(sortMetadata(logVariable.ReplaceAllStringFunc(l, logPlaceholder))))
	}
	return out
}

// grpcMetadata matches the message of a gRPC --http-debug line: its
// fixed lines, then the metadata, one "key: value" line each.
var grpcMetadata = regexp.MustCompile(`(msg="|"msg":")((?:In|Out) (?:Header|Trailer):\\n(?:(?:Full Method|Remote Address|Wire Length): [^\\"]*\\n)*)((?:[^"\\]|\\.)*)"`)

// wireLength matches the wire length of a gRPC header or trailer.
var wireLength = regexp.MustCompile(`Wire Length: \d+`)

// sortMetadata sorts the metadata lines of a gRPC --http-debug line,
// which both programs write in a map's order, and hides their wire
// length, which depends on what the connection's header compression
// has seen, so on the order of concurrent streams.
func sortMetadata(l string) string {
	return grpcMetadata.ReplaceAllStringFunc(l, func(m string) string {
		sm := grpcMetadata.FindStringSubmatch(m)
		lines := strings.Split(sm[3], `\n`)
		n := len(lines)
		for n > 0 && lines[n-1] == "" {
			n--
		}
		sort.Strings(lines[:n])
		return sm[1] + wireLength.ReplaceAllString(sm[2], "Wire Length: N") + strings.Join(lines, `\n`) + `"`
	})
}

// logVariable matches what differs between two runs or two checkouts in
// a log line: its time, a request id, a Date header, the folder of the
// corpus in a file URL (a stack frame's) or as a path (a loader's
// message), a gRPC message's time and
// grpc-go's version in its User-Agent (k6's and metronome's differ).
var logVariable = regexp.MustCompile(`^time="[^"]*" |"time":"[^"]*",|,"time":"[^"]*"|[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|Date: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT|(?:file://)?` + regexp.QuoteMeta(corpusDir()) + `/|(?:Sent|Received) Time: \d{4}-\d\d-\d\d [0-9:.]+ [+-]\d{4} \w+(?: m=[+-][0-9.]+)?|grpc-go/[0-9.]+`)

// corpusDir is the absolute path of the corpus folder, where the scripts
// run.
func corpusDir() string {
	d, _ := filepath.Abs("corpus")
	return filepath.ToSlash(d)
}

// logPlaceholder is what logVariable's match m becomes: nothing for the
// time, UUID for a request id, "Date: DATE" for a Date header,
// file:///CORPUS/ for the corpus folder in a file URL, /CORPUS/ for it as
// a path, "Sent Time: TIME" for a gRPC
// message's, grpc-go/VERSION.
func logPlaceholder(m string) string {
	switch {
	case strings.HasPrefix(m, "Date: "):
		return "Date: DATE"
	case strings.HasPrefix(m, "grpc-go/"):
		return "grpc-go/VERSION"
	case strings.HasPrefix(m, "Sent Time: "), strings.HasPrefix(m, "Received Time: "):
		t, _, _ := strings.Cut(m, ": ")
		return t + ": TIME"
	case strings.HasPrefix(m, "file://"):
		return "file:///CORPUS/"
	case strings.HasPrefix(m, "/"):
		return "/CORPUS/"
	case strings.Contains(m, "time"):
		return ""
	}
	return "UUID"
}

// messages reduces stderr, k6's or metronome's, to its error and warning
// lines, each "error: TEXT" or "warning: TEXT", sorted.
func messages(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		level, text := "", ""
		if m := k6Line.FindStringSubmatch(l); m != nil {
			t, err := strconv.Unquote(`"` + m[2] + `"`)
			if err != nil {
				t = m[2]
			}
			level, text = m[1], t
		} else if m := mLine.FindStringSubmatch(l); m != nil {
			level, text = "error", at.ReplaceAllString(m[1], "")
		} else {
			continue
		}
		text = strings.TrimPrefix(strings.TrimSpace(text), "GoError: ")
		out = append(out, level+": "+text)
	}
	sort.Strings(out)
	return out
}

// hermeticEnv is the test's environment without K6_* variables, with a
// private config directory, k6's usage report off and its automatic
// extension resolution (on by default in k6 v2, which asks a build
// service on the internet for a binary) off: nothing may leave the
// machine.
func hermeticEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "K6_") || name == "NO_COLOR" || name == "XDG_CONFIG_HOME" || name == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_CONFIG_HOME="+dir, "HOME="+dir, "K6_NO_USAGE_REPORT=true", "K6_AUTO_EXTENSION_RESOLUTION=false")
}

// readJSONOutput takes metric types, sample counts and tag sets from a
// JSON output file; a run that never started has none.
func (o *observation) readJSONOutput(path string, norm func(string) string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	tagSets := map[string]map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line struct {
			Type   string `json:"type"`
			Metric string `json:"metric"`
			Data   struct {
				Name     string            `json:"name"`
				Type     string            `json:"type"`
				Contains string            `json:"contains"`
				Tags     map[string]string `json:"tags"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("%q: %v", sc.Text(), err)
		}
		switch line.Type {
		case "Metric":
			m := o.metric(line.Data.Name)
			m.Type, m.Contains = line.Data.Type, line.Data.Contains
		case "Point":
			if line.Metric == "vus" || line.Metric == "vus_max" {
				o.metric(line.Metric)
				continue
			}
			o.metric(line.Metric).Samples++
			pairs := make([]string, 0, len(line.Data.Tags))
			for k, v := range line.Data.Tags {
				pairs = append(pairs, k+"="+norm(v))
			}
			sort.Strings(pairs)
			if tagSets[line.Metric] == nil {
				tagSets[line.Metric] = map[string]bool{}
			}
			tagSets[line.Metric][strings.Join(pairs, ",")] = true
		}
	}
	for name, sets := range tagSets {
		m := o.metric(name)
		for s := range sets {
			m.Tags = append(m.Tags, s)
		}
		sort.Strings(m.Tags)
	}
	return sc.Err()
}

func (o *observation) metric(name string) *metricObs {
	m := o.Metrics[name]
	if m == nil {
		m = &metricObs{}
		o.Metrics[name] = m
	}
	return m
}

// readExport takes totals, stat names, thresholds, checks, groups and the
// setup data from a --summary-export file.
func (o *observation) readExport(path string, norm func(string) string) error {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var probe struct {
		Version *string `json:"version"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return err
	}
	if probe.Version != nil {
		return o.readMachineExport(raw)
	}
	var e struct {
		RootGroup json.RawMessage           `json:"root_group"`
		Metrics   map[string]map[string]any `json:"metrics"`
		SetupData json.RawMessage           `json:"setup_data"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return err
	}
	for name, stats := range e.Metrics {
		m := o.metric(name)
		if parent, _, ok := strings.Cut(name, "{"); ok && o.Metrics[parent] != nil {
			// A submetric is of its parent's type.
			m.Type, m.Contains = o.Metrics[parent].Type, o.Metrics[parent].Contains
		}
		num := func(k string) *float64 {
			if v, ok := stats[k].(float64); ok {
				return &v
			}
			return nil
		}
		for k, v := range stats {
			if k == "thresholds" {
				th, _ := v.(map[string]any)
				m.Thresholds = map[string]bool{}
				for expr, failed := range th {
					m.Thresholds[expr], _ = failed.(bool)
				}
				continue
			}
			m.Stats = append(m.Stats, k)
		}
		sort.Strings(m.Stats)
		switch {
		case name == "data_sent" || name == "data_received" || name == "vus":
		case stats["passes"] != nil:
			m.Passes, m.Fails = num("passes"), num("fails")
		case stats["count"] != nil && stats["rate"] != nil:
			m.Count = num("count")
		case stats["avg"] != nil:
			if m.Contains == "" || m.Contains == "default" {
				m.Values = map[string]float64{}
				for k, v := range stats {
					if f, ok := v.(float64); ok {
						m.Values[k] = f
					}
				}
			}
		case stats["value"] != nil:
			m.Value = num("value")
		}
	}
	if len(e.SetupData) > 0 && string(e.SetupData) != "null" {
		var v any
		if err := json.Unmarshal([]byte(norm(string(e.SetupData))), &v); err == nil {
			o.SetupData = v
		}
	}
	o.Checks = map[string][2]float64{}
	var walk func(raw json.RawMessage) error
	walk = func(raw json.RawMessage) error {
		var g struct {
			Path   string                     `json:"path"`
			Groups map[string]json.RawMessage `json:"groups"`
			Checks map[string]struct {
				Path   string  `json:"path"`
				Passes float64 `json:"passes"`
				Fails  float64 `json:"fails"`
			} `json:"checks"`
		}
		if err := json.Unmarshal(raw, &g); err != nil {
			return err
		}
		if g.Path != "" {
			o.Groups = append(o.Groups, norm(g.Path))
		}
		for _, c := range g.Checks {
			o.Checks[norm(c.Path)] = [2]float64{c.Passes, c.Fails}
		}
		for _, sub := range g.Groups {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if len(e.RootGroup) > 0 {
		if err := walk(e.RootGroup); err != nil {
			return err
		}
	}
	sort.Strings(o.Groups)
	if len(o.Checks) == 0 {
		o.Checks = nil
	}
	return nil
}

// readMachineExport reads a --summary-export file in k6's machine-readable
// format: its shape, each metric's type, totals and stat names as
// readExport takes them from the legacy format (a rate's matches and
// total become passes and fails), and the checks by name.
func (o *observation) readMachineExport(raw []byte) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	o.ExportShape = shape(v)
	var e struct {
		Results struct {
			Checks struct {
				Results []struct {
					Name          string
					Passes, Fails float64
				}
			}
			Metrics []struct {
				Name, Type, Contains string
				Values               map[string]any
			}
		}
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return err
	}
	for _, mm := range e.Results.Metrics {
		m := o.metric(mm.Name)
		m.Type, m.Contains = mm.Type, mm.Contains
		m.Stats = m.Stats[:0]
		for k := range mm.Values {
			m.Stats = append(m.Stats, k)
		}
		sort.Strings(m.Stats)
		num := func(k string) float64 { f, _ := mm.Values[k].(float64); return f }
		switch {
		case mm.Name == "data_sent" || mm.Name == "data_received" || mm.Name == "vus":
		case mm.Type == "rate":
			p, f := num("matches"), num("total")-num("matches")
			m.Passes, m.Fails = &p, &f
		case mm.Type == "counter":
			c := num("count")
			m.Count = &c
		case mm.Type == "gauge":
			g := num("value")
			m.Value = &g
		case mm.Type == "trend" && mm.Contains == "default":
			m.Values = map[string]float64{}
			for k, x := range mm.Values {
				if f, ok := x.(float64); ok {
					m.Values[k] = f
				}
			}
		}
	}
	o.Checks = map[string][2]float64{}
	for _, c := range e.Results.Checks.Results {
		o.Checks[c.Name] = [2]float64{c.Passes, c.Fails}
	}
	if len(o.Checks) == 0 {
		o.Checks = nil
	}
	return nil
}

// shape lists the key paths of handleSummary's data with the type of each
// value: metric names, metric types and what they contain, check and group
// names are kept as they are; numbers become "number". metronome's own
// "metronome" key and its own metrics are left out, and so are the VU
// gauges, which k6 has only in runs longer than a second.
func shape(v any) []string {
	seen := map[string]bool{}
	var walk func(v any, path, key string)
	walk = func(v any, path, key string) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				seen[path+": {}"] = true
			}
			for k, sub := range x {
				if path == "" && k == "metronome" || path == ".metrics" && (metronomeOnly[k] || periodic[k]) {
					continue
				}
				walk(sub, path+"."+k, k)
			}
		case []any:
			if len(x) == 0 {
				seen[path+": []"] = true
			}
			for _, sub := range x {
				if m, ok := sub.(map[string]any); ok && strings.HasSuffix(path, ".metrics") {
					if name, _ := m["name"].(string); metronomeOnly[name] || periodic[name] {
						continue
					}
				}
				walk(sub, path+"[]", key)
			}
		case string:
			switch key {
			case "type", "contains", "name", "path", "id":
				seen[path+" = "+x] = true
			default:
				seen[path+": string"] = true
			}
		case float64:
			seen[path+": number"] = true
		case bool:
			seen[path+": bool"] = true
		case nil:
			seen[path+": null"] = true
		}
	}
	walk(v, "", "")
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// approx says which compared values may differ by timing, and by how
// much: keys are comparison keys or their prefixes ("metric.iterations"),
// values relative tolerances.
type approx map[string]float64

func (a approx) tolerance(key string) float64 {
	best, tol := -1, 0.0
	for p, v := range a {
		if strings.HasPrefix(key, p) && len(p) > best {
			best, tol = len(p), v
		}
	}
	return tol
}

// compare lists, by comparison key, where got differs from want. Keys are
// "exit_code", "metric.NAME" (present or not), "metric.NAME.FIELD",
// "checks", "groups", "setup_data" and "handle_summary_shape".
func compare(want, got *observation, tol approx) []mismatch {
	var out []mismatch
	add := func(key, format string, a ...any) { out = append(out, mismatch{key, fmt.Sprintf(format, a...)}) }
	if want.ExitCode != got.ExitCode {
		add("exit_code", "exit code %d, k6 %d", got.ExitCode, want.ExitCode)
	}
	names := map[string]bool{}
	for n := range want.Metrics {
		names[n] = true
	}
	for n := range got.Metrics {
		if !metronomeOnly[n] {
			names[n] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		w, g := want.Metrics[n], got.Metrics[n]
		key := "metric." + n
		switch {
		case (w == nil || g == nil) && periodic[n]:
			// k6 samples the VU gauges once a second: a shorter run
			// has none, so only their values are compared.
			continue
		case w == nil:
			add(key, "metric %s is not in k6's run", n)
			continue
		case g == nil:
			add(key, "metric %s is missing (k6 has it)", n)
			continue
		}
		if w.Type != g.Type || w.Contains != g.Contains {
			add(key+".type", "%s is %s/%s, k6 %s/%s", n, g.Type, g.Contains, w.Type, w.Contains)
		}
		numEq := func(field string, a, b float64) {
			k := key + "." + field
			t := tol.tolerance(k)
			if math.Abs(a-b) > t*math.Max(math.Abs(b), 1)+1e-9*math.Abs(b) {
				add(k, "%s %s = %v, k6 %v", n, field, a, b)
			}
		}
		numEq("samples", float64(g.Samples), float64(w.Samples))
		for _, f := range []struct {
			name string
			w, g *float64
		}{{"count", w.Count, g.Count}, {"passes", w.Passes, g.Passes}, {"fails", w.Fails, g.Fails}, {"value", w.Value, g.Value}} {
			switch {
			case f.w == nil && f.g == nil:
			case f.w == nil || f.g == nil:
				add(key+"."+f.name, "%s %s present in only one run (k6 %v)", n, f.name, f.w != nil)
			default:
				numEq(f.name, *f.g, *f.w)
			}
		}
		for stat, wv := range w.Values {
			gv, ok := g.Values[stat]
			if !ok {
				add(key+".values", "%s has no %s", n, stat)
				continue
			}
			// Percentiles come from an HdrHistogram (docs/metrics.md, Precision):
			// within 0.05% + 0.0005 of k6's exact value ("p90" is the
			// machine-readable summary's p(90)).
			slack := 1e-9 * math.Abs(wv)
			if stat == "med" || strings.HasPrefix(stat, "p(") || stat == "p90" || stat == "p95" {
				slack = 0.0005*math.Abs(wv) + 0.0005
			}
			k := key + ".values"
			if t := tol.tolerance(k); t > 0 {
				slack = math.Max(slack, t*math.Max(math.Abs(wv), 1))
			}
			if math.Abs(gv-wv) > slack {
				add(k, "%s %s = %v, k6 %v", n, stat, gv, wv)
			}
		}
		if d := diffStrings(w.Stats, g.Stats); d != "" {
			add(key+".export_stats", "%s export stats: %s", n, d)
		}
		if fmt.Sprint(w.Thresholds) != fmt.Sprint(g.Thresholds) {
			add(key+".thresholds", "%s thresholds (true = failed) %v, k6 %v", n, g.Thresholds, w.Thresholds)
		}
		if d := diffStrings(w.Tags, g.Tags); d != "" {
			add(key+".tags", "%s tag sets: %s", n, d)
		}
	}
	checkTol := tol.tolerance("checks")
	for path, wc := range want.Checks {
		gc, ok := got.Checks[path]
		if !ok {
			add("checks", "check %q is missing (k6: %v passes, %v fails)", path, wc[0], wc[1])
			continue
		}
		for i, what := range []string{"passes", "fails"} {
			if math.Abs(gc[i]-wc[i]) > checkTol*math.Max(wc[i], 1) {
				add("checks", "check %q: %v %s, k6 %v", path, gc[i], what, wc[i])
			}
		}
	}
	for path := range got.Checks {
		if _, ok := want.Checks[path]; !ok {
			add("checks", "check %q is not in k6's run", path)
		}
	}
	if d := diffStrings(want.Groups, got.Groups); d != "" {
		add("groups", "groups: %s", d)
	}
	if a, b := jsonText(want.SetupData), jsonText(got.SetupData); a != b {
		add("setup_data", "setup_data %s, k6 %s", b, a)
	}
	if d := diffStrings(want.SummaryShape, got.SummaryShape); d != "" {
		add("handle_summary_shape", "handleSummary data: %s", d)
	}
	if d := diffStrings(want.ExportShape, got.ExportShape); d != "" {
		add("export_shape", "machine-readable --summary-export: %s", d)
	}
	if d := diffStrings(want.Messages, got.Messages); d != "" {
		add("messages", "error and warning lines: %s", d)
	}
	if d := diffStrings(want.Loki, got.Loki); d != "" {
		add("loki", "pushes to Loki: %s", d)
	}
	if d := diffStrings(want.Console, got.Console); d != "" {
		add("console", "console lines: %s", d)
	}
	if d := diffStrings(want.Log, got.Log); d != "" {
		add("log", "log lines: %s", d)
	}
	return out
}

// mismatch is one difference, under the key a metronome_differs mark
// names.
type mismatch struct{ key, text string }

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// diffStrings describes how got differs from want as sets.
func diffStrings(want, got []string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for _, s := range want {
		w[s] = true
	}
	for _, s := range got {
		g[s] = true
	}
	var missing, extra []string
	for s := range w {
		if !g[s] {
			missing = append(missing, s)
		}
	}
	for s := range g {
		if !w[s] {
			extra = append(extra, s)
		}
	}
	if len(missing)+len(extra) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return fmt.Sprintf("missing %q, extra %q", missing, extra)
}
