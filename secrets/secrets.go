// Package secrets holds the secret sources a run is given with
// --secret-source, and hides the secrets a script fetched: a script reads
// a secret through k6/secrets, and from then on the value is shown
// nowhere. Everything a run shows, writes or serves goes through the
// Store's one replacer: a Writer (log lines, the terminal, the json and
// csv outputs), RedactBytes (a file written in one piece, the dashboard's
// pages), RedactJSON (the result output's lines, the REST API's answers)
// or Redact (the hdrlog's tags). Outputs that send to a server of the
// user's (InfluxDB, OpenTelemetry, remote write) send values as they are,
// as k6 does; docs/failures.md lists every place. k6 masks log lines only.
package secrets

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Mask is what a fetched secret is replaced with in log lines; it is
// k6's text, so logs read the same under both tools.
const Mask = "***SECRET_REDACTED***"

// DefaultName is the name of the source secrets.get reads from: the only
// source given, or the one marked default.
const DefaultName = "default"

// ErrNoValue is the error of a secret a source does not hold.
var ErrNoValue = errors.New("no value")

// Source is one place secrets come from.
type Source interface {
	// Get returns the secret called name, or ErrNoValue.
	Get(name string) (string, error)
}

// Store is the secret sources of a run, by name, and the values fetched
// so far, for Redact. It is safe for concurrent use by all VUs.
type Store struct {
	sources map[string]Source

	mu      sync.Mutex
	fetched map[string]bool
	// redact replaces every fetched value; nil until one is fetched, so
	// that log lines of runs without secrets pay one atomic load.
	redact atomic.Pointer[strings.Replacer]
}

// Parse makes the Store of the --secret-source values specs (see
// ParseEnv) in an empty environment.
func Parse(specs []string) (*Store, error) { return ParseEnv(specs, nil) }

// ParseEnv makes the Store of the --secret-source values specs, in k6's
// grammar: "file=PATH", "file=name=NAME,filename=PATH[,default]", or
// "url=KEY=VALUE,…[,name=NAME][,default]" (url.go; a bare "url" takes its
// configuration from env's K6_SECRET_SOURCE_URL_* variables alone). A
// lone source is also the default one. Errors are one sentence naming
// the value at fault.
func ParseEnv(specs []string, env map[string]string) (*Store, error) {
	s := &Store{sources: map[string]Source{}, fetched: map[string]bool{}}
	var defaults []Source
	for _, spec := range specs {
		typ, conf, _ := strings.Cut(spec, "=")
		if strings.TrimSpace(typ) == "" {
			return nil, fmt.Errorf("couldn't parse secret source configuration %q", spec)
		}
		var (
			name      string
			isDefault bool
			src       Source
			err       error
		)
		switch typ {
		case "file":
			var path string
			if name, path, isDefault, err = fileConfig(conf); err == nil {
				src, err = readFile(path)
			}
		case "url":
			name, isDefault, conf = nameAndDefault(conf)
			src, err = newURLSource(conf, env)
		default:
			return nil, fmt.Errorf("no secret source for type %q for configuration %q", typ, spec)
		}
		if err != nil {
			return nil, err
		}
		if name == "" {
			name = typ
		}
		if _, dup := s.sources[name]; dup {
			return nil, fmt.Errorf("secret source for name %q already registered before configuration %q", name, spec)
		}
		s.sources[name] = src
		if isDefault {
			defaults = append(defaults, src)
		}
	}
	switch {
	case len(defaults) > 0:
		s.sources[DefaultName] = defaults[len(defaults)-1]
	case len(specs) == 1:
		for _, src := range s.sources {
			s.sources[DefaultName] = src
		}
	}
	return s, nil
}

// nameAndDefault takes the name= and default entries out of a source's
// comma-separated configuration, as k6 does before a source sees it.
func nameAndDefault(conf string) (name string, isDefault bool, rest string) {
	var kept []string
	for _, kv := range strings.Split(conf, ",") {
		if kv == "default" {
			isDefault = true
			continue
		}
		if k, v, _ := strings.Cut(kv, "="); k == "name" {
			name = v
			continue
		}
		kept = append(kept, kv)
	}
	return name, isDefault, strings.Join(kept, ",")
}

// fileConfig reads the part after "file=": a path, or comma-separated
// name=, filename= and default.
func fileConfig(conf string) (name, path string, isDefault bool, err error) {
	if !strings.Contains(conf, "=") {
		return "", conf, false, nil
	}
	for _, kv := range strings.Split(conf, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "name":
			name = v
		case "filename":
			path = v
		case "default":
			isDefault = true
		default:
			return "", "", false, fmt.Errorf("unknown configuration key for file secret source %q", k)
		}
	}
	return name, path, isDefault, nil
}

// fileSource is a file of key=value lines.
type fileSource map[string]string

func (f fileSource) Get(name string) (string, error) {
	v, ok := f[name]
	if !ok {
		return "", ErrNoValue
	}
	return v, nil
}

// readFile reads a secrets file: one key=value a line, the value being
// all after the first "="; a line without "=" is an error, as in k6.
func readFile(path string) (fileSource, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := fileSource{}
	text := strings.TrimSuffix(string(b), "\n")
	if text == "" {
		return f, nil
	}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("parsing %q, needs =", line)
		}
		f[k] = v
	}
	return f, nil
}

// Get returns the secret called name from the source called source
// (DefaultName for secrets.get) and remembers its value for Redact.
func (s *Store) Get(source, name string) (string, error) {
	if s == nil || len(s.sources) == 0 {
		return "", errors.New("no secret sources are configured")
	}
	src, ok := s.sources[source]
	if !ok {
		return "", fmt.Errorf("no secret source with name %q is configured", source)
	}
	v, err := src.Get(name)
	if err != nil {
		return "", err
	}
	s.remember(v)
	return v, nil
}

// remember adds a fetched value to those Redact hides.
func (s *Store) remember(v string) {
	if v == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fetched[v] {
		return
	}
	s.fetched[v] = true
	var values []string
	for f := range s.fetched {
		values = append(values, spellings(f)...)
	}
	// Longest first: a secret that holds another is hidden whole.
	sort.Slice(values, func(i, j int) bool {
		if len(values[i]) != len(values[j]) {
			return len(values[i]) > len(values[j])
		}
		return values[i] < values[j]
	})
	pairs := make([]string, 0, 2*len(values))
	for _, f := range values {
		pairs = append(pairs, f, Mask)
	}
	s.redact.Store(strings.NewReplacer(pairs...))
}

// spellings are the ways v appears in what metronome writes: as is, and
// escaped as JSON (the json output, summary files), HTML (the report) and
// URLs (a token in a query string) escape it.
func spellings(v string) []string {
	out := []string{v}
	add := func(e string) {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	for _, escapeHTML := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escapeHTML)
		if enc.Encode(v) == nil {
			add(strings.TrimSuffix(b.String(), "\n")[1 : b.Len()-2])
		}
	}
	add(html.EscapeString(v))
	add(strings.ReplaceAll(html.EscapeString(v), "+", "&#43;")) // html/template
	add(url.QueryEscape(v))
	add(url.PathEscape(v))
	return out
}

// replacer is the replacer of the secrets fetched so far, nil before the
// first.
func (s *Store) replacer() *strings.Replacer {
	if s == nil {
		return nil
	}
	return s.redact.Load()
}

// Redact returns msg with every secret fetched so far replaced by Mask.
// A nil Store redacts nothing.
func (s *Store) Redact(msg string) string {
	r := s.replacer()
	if r == nil {
		return msg
	}
	return r.Replace(msg)
}
