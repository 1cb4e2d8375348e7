package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// The jslib.k6.io sweep: every library at every version in a checkout of
// github.com/grafana/jslib.k6.io ($JSLIB_DIR) is imported by a probe script
// that calls a few of its functions, in metronome and (with a k6 binary) in
// k6; what k6 v2.2.0 answered is recorded in jslib/k6-answers.json. The
// library files are fetched material and never enter this repository: the
// test serves them from $JSLIB_DIR on a loopback HTTPS server, with the
// https://jslib.k6.io/ URLs inside them pointed at that server, and is
// skipped where $JSLIB_DIR is not set.
//
// A probe, jslib/<library>.js (see jslibSameProbe), is a script template: {{BASE}} becomes the
// URL of the version's folder, {{JSLIB}} the server's root (for another
// library) and {{VERSION}} the version. It defines probe(), which returns
// the answers as a JSON-able object, and may define probeIteration(),
// whose answers, taken in the first iteration, are added as "iteration";
// either may return a promise. The harness adds setup() (which returns
// probe()'s answers), the default function, a handleSummary() that writes
// the answers with the run's checks, groups and custom metrics to $OUT,
// and the helpers attempt(f) (f's value, or "throws <error name>"),
// attemptAsync(f) (the same for an async f) and names(o) (o's own keys,
// sorted). Libraries that send requests send them to __ENV.ECHO, the
// suite's plain-HTTP loopback server (newServer), with the User-Agent
// jslib-sweep in both tools.

// jslibRecord is jslib/k6-answers.json.
type jslibRecord struct {
	K6Version string `json:"k6_version"`
	// Commit is the jslib.k6.io commit the answers were recorded from.
	Commit    string                  `json:"jslib_commit"`
	Libraries map[string]*jslibAnswer `json:"libraries"`
}

// jslibAnswer is what one tool did with one library version.
type jslibAnswer struct {
	Loads    bool `json:"loads"`
	ExitCode int  `json:"exit_code"`
	// Answers are probe()'s return value, with the servers' addresses
	// replaced by BASE and ECHO.
	Answers any `json:"answers,omitempty"`
	// Error is the first line of stderr of a run that did not load.
	Error string `json:"error,omitempty"`
}

const jslibRecordPath = "jslib/k6-answers.json"

// TestJSLib runs the sweep. It prints the table the docs publish
// (library, version, loads in k6, loads in metronome, same answers).
func TestJSLib(t *testing.T) {
	dir := os.Getenv("JSLIB_DIR")
	if dir == "" {
		t.Skip("JSLIB_DIR is not set: point it at a checkout of github.com/grafana/jslib.k6.io to run the sweep")
	}
	libDir := filepath.Join(dir, "lib")
	versions, err := jslibVersions(libDir)
	if err != nil {
		t.Fatal(err)
	}
	rec := &jslibRecord{Libraries: map[string]*jslibAnswer{}}
	if raw, err := os.ReadFile(jslibRecordPath); err == nil {
		if err := json.Unmarshal(raw, rec); err != nil {
			t.Fatalf("%s: %v", jslibRecordPath, err)
		}
	} else if k6Bin == "" {
		t.Fatalf("%s: %v; record k6's answers with K6_BINARY set and -update-k6", jslibRecordPath, err)
	}

	handler := &jslibHandler{dir: libDir}
	files := httptest.NewTLSServer(handler)
	t.Cleanup(files.Close)
	handler.base = files.URL
	echo := newServer()
	t.Cleanup(echo.Close)
	certFile := filepath.Join(t.TempDir(), "jslib-ca.pem")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: files.Certificate().Raw})
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	env := jslibEnv{base: files.URL, echo: echo.URL, certFile: certFile}

	type row struct {
		lib, version   string
		k6, met, match bool
	}
	var rows []row
	for _, v := range versions {
		t.Run(v.lib+"@"+v.version, func(t *testing.T) {
			probe := v.lib
			if p, ok := jslibSameProbe[v.lib]; ok {
				probe = p
			}
			tmpl, err := os.ReadFile(filepath.Join("jslib", probe+".js"))
			if err != nil {
				t.Fatalf("no probe for %s: write jslib/%s.js (%v)", v.lib, probe, err)
			}
			script := jslibScript(string(tmpl), files.URL, v.lib, v.version)
			key := v.lib + "/" + v.version
			got := env.run(t, metronomeBin, script)
			if k6Bin != "" {
				k6got := env.run(t, k6Bin, script)
				want := rec.Libraries[key]
				switch {
				case *updateK6 || want == nil:
					rec.Libraries[key] = k6got
				case !reflect.DeepEqual(want, k6got):
					t.Errorf("k6 (%s) no longer answers as %s records:\n got  %s\n want %s\nre-record with -update-k6 if that is k6's new behaviour",
						k6Bin, jslibRecordPath, jsonString(k6got), jsonString(want))
				}
			}
			want := rec.Libraries[key]
			if want == nil {
				t.Fatalf("%s has no answers of k6 for %s: run with K6_BINARY set", jslibRecordPath, key)
			}
			match := got.Loads == want.Loads && got.ExitCode == want.ExitCode && reflect.DeepEqual(got.Answers, want.Answers)
			rows = append(rows, row{v.lib, v.version, want.Loads, got.Loads, match})
			switch {
			case want.Loads && !got.Loads:
				t.Errorf("%s loads in k6 but not in metronome (exit code %d): %s", key, got.ExitCode, got.Error)
			case !match:
				t.Errorf("%s: metronome answers differently from k6:%s", key, answerDiff(got, want))
			}
		})
	}
	if k6Bin != "" {
		rec.K6Version = k6Version
		rec.Commit = jslibCommit(dir)
		if err := writeRecord(jslibRecordPath, rec); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	b.WriteString("| library | version | loads in k6 | loads in metronome | same answers |\n|---|---|---|---|---|\n")
	yes := map[bool]string{true: "yes", false: "no"}
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.lib, r.version, yes[r.k6], yes[r.met], yes[r.match])
	}
	t.Logf("the sweep's table:\n%s", b.String())
}

// jslibSameProbe names the probe of libraries published under two names.
var jslibSameProbe = map[string]string{"expect": "funk", "functional": "funk"}

type jslibVersion struct{ lib, version string }

// jslibVersions lists lib/<library>/<version> folders, sorted.
func jslibVersions(libDir string) ([]jslibVersion, error) {
	libs, err := os.ReadDir(libDir)
	if err != nil {
		return nil, err
	}
	var out []jslibVersion
	for _, l := range libs {
		if !l.IsDir() {
			continue
		}
		vs, err := os.ReadDir(filepath.Join(libDir, l.Name()))
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if v.IsDir() {
				out = append(out, jslibVersion{l.Name(), v.Name()})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].lib != out[j].lib {
			return out[i].lib < out[j].lib
		}
		return versionLess(out[i].version, out[j].version)
	})
	return out, nil
}

// versionLess orders dotted versions numerically.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		var x, y int
		fmt.Sscan(as[i], &x)
		fmt.Sscan(bs[i], &y)
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}

// jslibHandler serves the library files, with the https://jslib.k6.io/
// URLs in JavaScript files pointed at base, so that no request leaves
// the machine.
type jslibHandler struct {
	dir  string
	base string
}

func (h *jslibHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := filepath.Join(h.dir, filepath.FromSlash(filepath.Clean("/"+r.URL.Path)))
	raw, err := os.ReadFile(p)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if strings.HasSuffix(p, ".js") {
		raw = bytes.ReplaceAll(raw, []byte("https://jslib.k6.io/"), []byte(h.base+"/"))
		w.Header().Set("Content-Type", "application/javascript")
	}
	_, _ = w.Write(raw)
}

// jslibTail is what the harness adds to every probe.
const jslibTail = `
import { check as jslibCheck } from 'k6';
export async function setup() { return await probe(); }
export default async function () {
  if (typeof probeIteration === 'function' && __ITER === 0 && __VU === 1) {
    const answers = await probeIteration();
    jslibCheck(null, { ['iteration ' + JSON.stringify(answers === undefined ? null : answers)]: () => true });
  }
}
const jslibBuiltin = /^(vus|vus_max|iterations|iteration_duration|dropped_iterations|data_received|data_sent|checks|group_duration|http_req.*|ws_.*|grpc_.*|corrected_latency|schedule_lag|generator_.*)$/;
export function handleSummary(data) {
  const answers = data.setup_data === undefined || data.setup_data === null ? {} : data.setup_data;
  const checks = [];
  const groups = [];
  (function walk(g) {
    for (const c of g.checks) {
      if (c.name.startsWith('iteration ')) answers.iteration = JSON.parse(c.name.slice('iteration '.length));
      else checks.push(c.path + ' ' + c.passes + '/' + c.fails);
    }
    for (const sub of g.groups) {
      groups.push(sub.path);
      walk(sub);
    }
  })(data.root_group);
  answers.checks = checks.sort();
  answers.groups = groups.sort();
  answers.metrics = Object.keys(data.metrics).filter((m) => !jslibBuiltin.test(m.split('{')[0])).sort();
  return { [__ENV.OUT]: JSON.stringify(answers) };
}
function attempt(f) {
  try { return f(); } catch (e) { return 'throws ' + (e && e.name ? e.name : typeof e); }
}
async function attemptAsync(f) {
  try { return await f(); } catch (e) { return 'throws ' + (e && e.name ? e.name : typeof e); }
}
function names(o) { return o === undefined || o === null ? o : Object.keys(o).sort(); }
`

func jslibScript(tmpl, root, lib, version string) string {
	return strings.NewReplacer("{{BASE}}", root+"/"+lib+"/"+version, "{{JSLIB}}", root, "{{VERSION}}", version).Replace(tmpl) + jslibTail
}

type jslibEnv struct{ base, echo, certFile string }

// run runs script with bin and reduces the run to a jslibAnswer.
func (e jslibEnv) run(t *testing.T, bin, script string) *jslibAnswer {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "probe.js"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "answers.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--quiet", "--no-color", "--address=", "-e", "OUT="+out, "-e", "ECHO="+e.echo, "probe.js")
	cmd.Dir = dir
	// The loopback server's certificate is the only root: a request to
	// anywhere else fails its TLS handshake.
	cmd.Env = append(hermeticEnv(dir), "SSL_CERT_FILE="+e.certFile, "SSL_CERT_DIR="+dir, "K6_USER_AGENT=jslib-sweep")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	a := &jslibAnswer{}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s did not finish within 90 s\nstderr:\n%s", filepath.Base(bin), stderr.String())
	case errors.As(err, &ee):
		a.ExitCode = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		// Nothing reached handleSummary: the library did not load.
		a.Error, _, _ = strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return a
	}
	a.Loads = true
	norm := strings.NewReplacer(e.base, "BASE", e.echo, "ECHO", strings.TrimPrefix(e.echo, "http://"), "ECHO_HOST").Replace
	if err := json.Unmarshal([]byte(norm(string(raw))), &a.Answers); err != nil {
		t.Fatalf("%s wrote answers that are not JSON: %v\n%s", filepath.Base(bin), err, raw)
	}
	return a
}

// jslibCommit is the checked-out commit of the jslib.k6.io checkout.
func jslibCommit(dir string) string {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// answerDiff lists where got's answers differ from want's, by top-level
// key.
func answerDiff(got, want *jslibAnswer) string {
	var b strings.Builder
	if got.Loads != want.Loads || got.ExitCode != want.ExitCode {
		fmt.Fprintf(&b, "\n loads %v, exit code %d; k6 %v, %d (%s)", got.Loads, got.ExitCode, want.Loads, want.ExitCode, got.Error)
	}
	g, _ := got.Answers.(map[string]any)
	w, _ := want.Answers.(map[string]any)
	keys := maps.Clone(w)
	maps.Copy(keys, g)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !reflect.DeepEqual(g[k], w[k]) {
			fmt.Fprintf(&b, "\n %s: metronome %s\n %s  k6        %s", k, jsonString(g[k]), strings.Repeat(" ", len(k)), jsonString(w[k]))
		}
	}
	return b.String()
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
