package k6api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/cli"
	"github.com/metronome-load/metronome/internal/k6api"
	"github.com/metronome-load/metronome/internal/testkit/encodingtest"

	// What the custom binary of TestXK6Extensions is built from, so that
	// go test alone, from an empty module cache, downloads every module
	// its offline build needs.
	_ "github.com/metronome-load/metronome/builtin"

	// The layer's dependencies beyond metronome's own: imported here, so
	// that metronome's go.mod and go.sum list them at the versions the
	// layer's go.mod requires (TestLayerRequiresMetronomesVersions) and
	// go test puts them in the module cache, where the offline build of
	// TestXK6Extensions finds them.
	_ "github.com/serenize/snaker"
	_ "github.com/sirupsen/logrus"
	_ "gopkg.in/guregu/null.v3"
)

// requires reads the requirements of a go.mod file: module → version.
func requires(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(strings.Split(sc.Text(), "//")[0])
		switch {
		case line == "require (":
			in = true
			continue
		case line == ")":
			in = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !in:
			continue
		}
		if f := strings.Fields(line); len(f) == 2 {
			out[f[0]] = f[1]
		}
	}
	return out
}

// TestLayerRequiresMetronomesVersions checks that each module the layer
// requires is required by metronome at the same version: a build then
// needs nothing that building metronome did not bring, and works offline.
func TestLayerRequiresMetronomesVersions(t *testing.T) {
	ours := requires(t, "../../go.mod")
	for _, gomod := range []string{"_v1/go.mod.txt", "_v2/go.mod.txt"} {
		for mod, v := range requires(t, gomod) {
			if strings.HasPrefix(mod, "go.k6.io/") || mod == "github.com/metronome-load/metronome" {
				continue
			}
			if ours[mod] != v {
				t.Errorf("%s requires %s %s, metronome's go.mod %q", gomod, mod, v, ours[mod])
			}
		}
	}
}

// TestWrite checks what Write leaves: both modules under their paths,
// with go.mod files that require the metronome version given.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	repl, err := k6api.Write(dir, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"go.k6.io/k6=" + filepath.Join(dir, "k6"), "go.k6.io/k6/v2=" + filepath.Join(dir, "k6v2")}
	if strings.Join(repl, " ") != strings.Join(want, " ") {
		t.Fatalf("replacements %q, want %q", repl, want)
	}
	v2, err := os.ReadFile(filepath.Join(dir, "k6v2", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(v2), "module go.k6.io/k6/v2\n") || !strings.Contains(string(v2), "github.com/metronome-load/metronome v1.2.3\n") {
		t.Errorf("go.k6.io/k6/v2's go.mod:\n%s", v2)
	}
	for _, f := range []string{"k6/go.mod", "k6/js/modules/modules.go", "k6v2/metrics/sample.go", "k6v2/lib/state.go"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s was not written: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "k6v2", "go.mod.txt")); err == nil {
		t.Error("go.mod.txt was written as it is")
	}
}

// buildProbes builds metronome with the test extensions of testdata, one
// on each of k6's module paths, with metronome build against this
// checkout and the Go module proxy off.
func buildProbes(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a metronome binary with the Go tool; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH, so metronome build cannot be tested")
	}
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOTOOLCHAIN", "local")
	bin := filepath.Join(t.TempDir(), "metronome-probes")
	var out, errs bytes.Buffer
	root := cli.NewRoot(&out, &errs)
	root.SetArgs([]string{"build",
		"--with", "example.com/xk6probe=./testdata/xk6probe",
		"--with", "example.com/xk6probev1=./testdata/xk6probev1",
		"--output", bin})
	if err := root.Execute(); err != nil {
		t.Fatalf("metronome build: %v\n%s", err, errs.String())
	}
	return bin
}

// result is what a run of the custom binary did.
type result struct {
	code   int
	output string // stdout and stderr
}

// run runs the binary with args in testdata/scripts, with env added to
// the process environment.
func run(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = "testdata/scripts"
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return result{0, string(out)}
	case errors.As(err, &exit):
		return result{exit.ExitCode(), string(out)}
	}
	t.Fatalf("running %v: %v\n%s", args, err, out)
	return result{}
}

// lines are the lines of out, without blank ones.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

// exported reads a summary export: metric → statistic → value.
func exported(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Metrics map[string]map[string]any `json:"metrics"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s.Metrics
}

// TestXK6Extensions builds two extensions written against k6's API, one
// per module path, into metronome, and runs scripts that use them.
func TestXK6Extensions(t *testing.T) {
	bin := buildProbes(t)

	t.Run("version", func(t *testing.T) {
		r := run(t, bin, nil, "version")
		for _, want := range []string{
			"example.com/xk6probe (devel), k6/x/probe [js module]",
			"example.com/xk6probev1 (devel), k6/x/probev1 [js module]",
			"example.com/xk6probe (devel), probe [output]",
		} {
			if !strings.Contains(r.output, want) {
				t.Errorf("version lacks %q:\n%s", want, r.output)
			}
		}
	})

	// The console lines are those k6 v2.2.0, built with the same
	// extension, printed for this script: k6's field names both ways
	// (snake_case, js tags, json tags ignored, "-" hidden), methods with
	// a lower first letter (JSON whole), a Go error thrown as a GoError,
	// the init-context error, options and durations, the tag check.
	t.Run("names", func(t *testing.T) {
		r := run(t, bin, []string{"PROBE_GREETING=howdy"}, "run", "-q", "--no-summary", "-i", "1", "--log-format", "raw", "names.js")
		want := []string{
			"probe instantiated",
			"probe instantiated",
			"howdy, vu init",
			`{"continue_on_error":true,"user_id":"u1","http_method":"GET","custom_name":"c","json_only":""} true u1 GET c  undefined`,
			`made 201 made/201 {"label":"made"} label,http_code,describeIt,json`,
			"caught GoError: boom",
			"caught GoError: initOnly may only be called in the init context",
			"maxRedirects=10 throw=false systemTags.scenario=true vu=1 26h0m0s 1.5s",
			"caught GoError: invalid value for metric tag 'bad': only String, Boolean and Number types are accepted as a metric tag values",
			"20 26", // k6 printed 14 before the probe exported timed, exchange, get, surface, send, jarCookies, fence, keep, keptState, prevDone, lateResolve and lateCall
		}
		if got := lines(r.output); r.code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("exit %d, output:\n%s\nwant:\n%s", r.code, r.output, strings.Join(want, "\n"))
		}
	})

	// Each name of k6's surface the probe uses (surfaceNames), with what
	// k6 documents it to give.
	t.Run("surface", func(t *testing.T) {
		r := run(t, bin, []string{"PROBE_GREETING=howdy"}, "run", "-q", "--no-summary", "-i", "1", "--log-format", "raw", "surface.js")
		want := []string{
			"probe instantiated",
			"probe instantiated",
			"vu ctx=true initEnv=true state=true",
			"exports d 1",
			"nullish true true true false",
			"initcontexterror only in init",
			"throw GoError: thrown",
			"ext k6/x/probe=js k6/x/probev1/count=js k6/x/probev1=js",
			"types counter,gauge,trend,rate,default,time,data",
			"D=1500 B=1,0",
			"metric probe_surface gauge default same=true conflict=true",
			"tags a=1,b=2 get=1,true,false root=0",
			"samples 2 7 probe_surface true t1",
			"push true false",
			"system vu iter ip status url has=true enabled=5",
			"builtin data_sent data_received http_reqs http_req_duration iterations",
			"threshold count>1",
			"state samples=true tag=on tls=true dial=true resolver=false logger=true jar=true vu=1 iter=0",
			"options maxRedirects=10 throw=false noConnectionReuse=false noVUConnectionReuse=false userAgent=true systemTags.vu=false",
			"bufferpool empty=true state=true",
			"types 1m30s true 2s 3s 1m30s true true",
			"tls tls1.0 tls1.1 tls1.2 tls1.3",
			"cookiejar true",
		}
		if got := lines(r.output); r.code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("exit %d, output:\n%s\nwant:\n%s", r.code, r.output, strings.Join(want, "\n"))
		}
	})

	t.Run("iteration context", func(t *testing.T) {
		r := run(t, bin, nil, "run", "-q", "--no-summary", "--log-format", "raw", "context.js")
		want := []string{"previous call none", "settled 0 in 0", "previous call done", "settled 1 in 1", "previous call done", "settled 2 in 2"}
		var got []string
		for _, l := range lines(r.output) {
			if strings.HasPrefix(l, "previous call") || strings.HasPrefix(l, "settled") {
				got = append(got, l)
			}
		}
		if r.code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("exit %d, output:\n%s\nwant:\n%s", r.code, r.output, strings.Join(want, "\n"))
		}
	})

	// A sync iteration whose callback is reserved by a goroutine the
	// iteration started runs it before it ends. The goroutine races the
	// iteration's end (in k6 too): the VU yields to it before it ends,
	// which a loaded machine may not honour at once, so the test asks that
	// at least half run in their own iteration (without the yield none
	// of 20 do) and none twice.
	t.Run("late reservation", func(t *testing.T) {
		r := run(t, bin, nil, "run", "-q", "--no-summary", "--log-format", "raw", "latecall.js")
		own, seen := 0, map[string]bool{}
		for _, l := range lines(r.output) {
			var from, in int
			if _, err := fmt.Sscanf(l, "late call %d in %d", &from, &in); err != nil {
				continue
			}
			if seen[fmt.Sprint(from)] {
				t.Errorf("the callback of iteration %d ran twice", from)
			}
			seen[fmt.Sprint(from)] = true
			if from == in {
				own++
			}
		}
		t.Logf("%d of 20 callbacks ran in their own iteration", own)
		if r.code != 0 || own < 10 {
			t.Errorf("exit %d, %d of 20 callbacks ran in their own iteration, want at least 10; output:\n%s", r.code, own, r.output)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		dir := t.TempDir()
		export, file := filepath.Join(dir, "summary.json"), filepath.Join(dir, "result.json")
		r := run(t, bin, nil, "run", "-q", "--summary-export", export, "-o", "result="+file, "metrics.js")
		if r.code != 0 || !strings.Contains(r.output, "late dropped 1") || !regexp.MustCompile(`kept state vu=[0-9]+`).MatchString(r.output) {
			t.Fatalf("exit %d, want 0, one late push refused and the State of a VU of main after its iterations:\n%s", r.code, r.output)
		}
		checkProbeMetrics(t, exported(t, export))

		// The result file holds the extension's samples: merge gives the
		// same numbers and judges the thresholds on them alike.
		mergedExport := filepath.Join(dir, "merged.json")
		m := run(t, bin, nil, "merge", "--summary-export", mergedExport, file)
		if m.code != 0 {
			t.Fatalf("merge exit %d:\n%s", m.code, m.output)
		}
		checkProbeMetrics(t, exported(t, mergedExport))
	})

	t.Run("threshold on a pushed metric fails", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "result.json")
		r := run(t, bin, []string{"THRESHOLD=fail"}, "run", "-q", "-o", "result="+file, "metrics.js")
		if r.code != 99 || !strings.Contains(r.output, "probe_ops{op:work}") {
			t.Errorf("exit %d, want 99 naming probe_ops{op:work}:\n%s", r.code, r.output)
		}
		if m := run(t, bin, nil, "merge", file); m.code != 99 {
			t.Errorf("merge of the failed run: exit %d, want 99:\n%s", m.code, m.output)
		}
	})

	t.Run("network and environment", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				// Echo what comes until the client closes.
				go func() {
					defer c.Close()
					_, _ = io.Copy(c, c)
				}()
			}
		}()
		addr := "ADDR=" + ln.Addr().String()
		// What k6's *netext.Dialer shows of blockHostnames: a name
		// matches case aside, the name itself before a wildcard, else the
		// longest wildcard; "*.x" does not match x.
		fence := func(ranges int) []string {
			return []string{
				fmt.Sprintf(`A.Blocked.test "*.blocked.test" true, %d ranges`, ranges),
				fmt.Sprintf(`blocked.test "*ocked.test" true, %d ranges`, ranges),
				fmt.Sprintf(`exact.test "exact.test" true, %d ranges`, ranges),
				fmt.Sprintf(`open.test "" false, %d ranges`, ranges),
			}
		}
		// k6's answers: the dialer refuses a blacklisted address with
		// k6's words; LookupEnv sees the process environment, and -e
		// values over it.
		for _, c := range []struct {
			args []string
			want []string
		}{
			{[]string{"-e", "BLACKLIST=on"}, append([]string{"refused: IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)",
				"refused: IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)",
				"refused: IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)"}, append(fence(1), "howdy, env", "hi v1 from v1 v1 0")...)},
			{[]string{"-e", "BLACKLIST=off", "-e", "PROBE_GREETING=from -e"}, append([]string{"connected", "ping!", "127.0.0.1 port 0"},
				append(fence(0), "from -e, env", "hi v1 from v1 v1 0")...)},
		} {
			points := filepath.Join(t.TempDir(), "points.json")
			args := append([]string{"run", "-q", "--no-summary", "-o", "json=" + points, "-i", "1", "--log-format", "raw", "-e", addr}, c.args...)
			r := run(t, bin, []string{"PROBE_GREETING=howdy"}, append(args, "net.js")...)
			got := lines(r.output)
			if r.code != 0 || len(got) < len(c.want) || strings.Join(got[len(got)-len(c.want):], "\n") != strings.Join(c.want, "\n") {
				t.Errorf("%v: exit %d, output:\n%s\nwant it to end with:\n%s", c.args, r.code, r.output, strings.Join(c.want, "\n"))
			}
			// The 5 bytes of ping! each way through State.Dialer are the
			// iteration's data_sent and data_received, as k6's dialer
			// counts them; a refused dial moves none.
			want := 5.0
			if c.args[1] == "BLACKLIST=on" {
				want = 0
			}
			sums := pointSums(t, points)
			for _, name := range []string{"data_sent", "data_received"} {
				if sums[name] != want {
					t.Errorf("%v: %s adds up to %v, want %v", c.args, name, sums[name], want)
				}
			}
		}
	})

	t.Run("httpext", func(t *testing.T) { testHTTPExt(t, bin) })
	t.Run("output", func(t *testing.T) { testOutput(t, bin) })
	t.Run("stall through an extension", func(t *testing.T) { testStall(t, bin) })
}

// testHTTPExt runs httpext.js: requests of k6's HTTP engine
// (httpext.MakeRequest) reach a loopback server with their header, body
// and the jar's cookies, come back with status, body and header, and are
// recorded as a script's requests: http_reqs, http_req_duration and
// corrected_latency, tagged with the URL's name and the extension's tag.
// A k6/http jar object reaches the extension with a working Jar, whose
// cookies k6/http sends too.
func testHTTPExt(t *testing.T, bin string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/push":
			// The body undone from its encodings, last applied first.
			seen := r.Header.Get("X-Probe")
			enc := r.Header.Get("Content-Encoding")
			if enc != "" {
				seen += " " + enc
			}
			raw, _ := io.ReadAll(r.Body)
			b, _ := encodingtest.Decode(enc, raw)
			if string(b) != "payload" {
				seen = "wrong body " + string(b)
			}
			w.Header().Set("X-Seen", seen)
			w.WriteHeader(http.StatusNoContent)
		case "/cookies":
			_, _ = w.Write([]byte(r.Header.Get("Cookie")))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	points := filepath.Join(t.TempDir(), "points.json")
	r := run(t, bin, nil, "run", "-q", "--no-summary", "-o", "json="+points, "--log-format", "raw",
		"-e", "TARGET="+srv.URL, "httpext.js")
	want := []string{
		`sent POST /push 7 5s auth="" throw=false type=0 redirects=10: status=204 body="" seen=send error="" empty=0,[] request="payload",""`,
		`sent POST /zip 7 5s auth="" throw=false type=0 redirects=10: status=204 body="" seen=send gzip, br, zstd, deflate error="" empty=0,[] request="payload","gzip, br, zstd, deflate"`,
		`sent GET  0 5s auth="" throw=false type=0 redirects=10: status=404 body="404 page not found\n" seen= error="" empty=0,[] request="",""`,
		"vu jar fromgo=1,fromjs=2",
		`sent GET /cookies 0 5s auth="" throw=false type=0 redirects=10: status=200 body="fromjs=2; fromgo=1" seen= error="" empty=0,[] request="",""`,
		"own jar fromgo=1",
		"k6/http sends fromjs=2; fromgo=1",
	}
	if got := lines(r.output); r.code != 0 || !strings.HasSuffix(strings.Join(got, "\n"), strings.Join(want, "\n")) {
		t.Errorf("exit %d, output:\n%s\nwant it to end with:\n%s", r.code, r.output, strings.Join(want, "\n"))
	}

	// Each request of the engine: one sample of each metric, tagged with
	// the name (the URL's own when unnamed), status, the callback's
	// verdict and the extension's tag.
	b, err := os.ReadFile(points)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, l := range lines(string(b)) {
		var p struct {
			Type   string `json:"type"`
			Metric string `json:"metric"`
			Data   struct {
				Tags map[string]string `json:"tags"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("%s: %v", points, err)
		}
		if tags := p.Data.Tags; p.Type == "Point" && tags["probe"] == "send" {
			got[fmt.Sprintf("%s %s %s %s %s", p.Metric, tags["name"], tags["url"], tags["status"], tags["expected_response"])]++
		}
	}
	for _, req := range []string{"/push /push 204 true", "/zip /zip 204 true", "/cookies /cookies 200 true",
		srv.URL + "/missing " + srv.URL + "/missing 404 false"} {
		for _, m := range []string{"http_reqs", "http_req_duration", "http_req_failed", "corrected_latency"} {
			if got[m+" "+req] != 1 {
				t.Errorf("%d samples of %s for %s, want 1 (all: %v)", got[m+" "+req], m, req, got)
			}
		}
	}
}

// probeReport is what the probe output (testdata/xk6probe/output.go)
// saw of a run.
type probeReport struct {
	Counts     map[string]int                `json:"counts"`
	Sums       map[string]float64            `json:"sums"`
	Kinds      map[string]string             `json:"kinds"`
	Tags       map[string][]string           `json:"tags"`
	Outcomes   map[string]int                `json:"outcomes"`
	Formats    map[string]map[string]float64 `json:"formats"`
	Thresholds map[string][]string           `json:"thresholds"`
	Flushes    int                           `json:"flushes"`
	JSONConfig json.RawMessage               `json:"jsonConfig"`
	OutputType string                        `json:"outputType"`
	Env        string                        `json:"env"`
	Script     string                        `json:"script"`
	StopError  string                        `json:"stopError"`
}

func readProbeReport(t *testing.T, path string) probeReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the probe output wrote no report: %v", err)
	}
	var r probeReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// testOutput runs an output extension written against k6's API (the
// probe's "probe" output, built into bin) with -o: it gets every sample
// the summary counts, metronome's own metrics with their tags, the
// thresholds, its config file object and environment, and what it
// buffered at Stop.
func testOutput(t *testing.T, bin string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	target := "TARGET=" + srv.URL

	t.Run("samples", func(t *testing.T) {
		dir := t.TempDir()
		export, rep, cfg := filepath.Join(dir, "summary.json"), filepath.Join(dir, "report.json"), filepath.Join(dir, "config.json")
		if err := os.WriteFile(cfg, []byte(`{"collectors": {"probe": {"label": "from the config file"}}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, bin, []string{"PROBE_OUT_ENV=seen"}, "run", "-q", "-c", cfg, "--summary-export", export,
			"-o", "probe="+rep, "-e", target, "output.js")
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s", r.code, r.output)
		}
		sum, got := exported(t, export), readProbeReport(t, rep)
		for _, name := range []string{"iterations", "http_reqs"} {
			want, _ := sum[name]["count"].(float64)
			if want == 0 || float64(got.Counts[name]) != want {
				t.Errorf("%s: the output got %d samples, the summary counts %v", name, got.Counts[name], sum[name]["count"])
			}
		}
		// Each request answered records one corrected_latency, and each
		// arrival dropped under load one tagged outcome=dropped; each
		// iteration of the open model records one schedule_lag. Over
		// all of them, the mean is the summary's.
		dropped, _ := sum["dropped_iterations"]["count"].(float64)
		if got.Outcomes[""] != got.Counts["http_reqs"] || float64(got.Outcomes["dropped"]) != dropped ||
			got.Outcomes[""]+got.Outcomes["dropped"] != got.Counts["corrected_latency"] {
			t.Errorf("corrected_latency by outcome %v, want one per request (%d) and per dropped iteration (%v)",
				got.Outcomes, got.Counts["http_reqs"], dropped)
		}
		for metric, per := range map[string]string{"schedule_lag": "iterations", "http_req_duration": "http_reqs", "corrected_latency": "corrected_latency"} {
			n := got.Counts[metric]
			if n == 0 || n != got.Counts[per] {
				t.Errorf("%s: %d samples, want one per %s (%d)", metric, n, per, got.Counts[per])
				continue
			}
			avg, _ := sum[metric]["avg"].(float64)
			if mean := got.Sums[metric] / float64(n); math.Abs(mean-avg) > 1e-9*max(1, avg) {
				t.Errorf("%s: the output's mean %v, the summary's avg %v", metric, mean, avg)
			}
		}
		// k6's sinks, which outputs aggregate with, give the summary's
		// statistics: a trend's, a counter's sum, a rate's share. The
		// sink's percentiles are exact, the summary's within its
		// histogram's documented precision (docs/metrics.md#precision):
		// 0.05% + 0.0005; the rest agree to rounding.
		for metric, stats := range map[string][]string{
			"corrected_latency": {"min", "med", "avg", "p(90)", "p(95)", "max"},
			"http_req_duration": {"min", "med", "avg", "p(90)", "p(95)", "max"},
			"http_reqs":         {"count"},
			"http_req_failed":   {"rate"},
		} {
			for _, stat := range stats {
				want, _ := sum[metric][stat].(float64)
				if stat == "rate" {
					want, _ = sum[metric]["value"].(float64)
				}
				tolerance := 1e-9 * max(1, want)
				if stat == "med" || strings.HasPrefix(stat, "p(") {
					tolerance = 0.0005*want + 0.0005
				}
				if v, ok := got.Formats[metric][stat]; !ok || math.Abs(v-want) > tolerance {
					t.Errorf("%s %s: the k6 sink gave %v, the summary %v", metric, stat, got.Formats[metric][stat], want)
				}
			}
		}
		if got.Kinds["corrected_latency"] != "trend/time" || got.Kinds["http_reqs"] != "counter/default" {
			t.Errorf("metric kinds %v, want corrected_latency trend/time, http_reqs counter/default", got.Kinds)
		}
		for _, tag := range []string{"scenario", "method", "status", "name"} {
			if !slices.Contains(got.Tags["corrected_latency"], tag) {
				t.Errorf("corrected_latency's samples had tags %v, want %s among them", got.Tags["corrected_latency"], tag)
			}
		}
		if want := []string{"p(95)<5000"}; !slices.Equal(got.Thresholds["http_req_duration"], want) {
			t.Errorf("thresholds %v, want http_req_duration %v", got.Thresholds, want)
		}
		if string(got.JSONConfig) != `{"label":"from the config file"}` || got.Env != "seen" || got.OutputType != "probe" ||
			!strings.HasSuffix(got.Script, "/testdata/scripts/output.js") || !strings.HasPrefix(got.Script, "file:/") {
			t.Errorf("params: JSONConfig %s, env %q, type %q, script %q", got.JSONConfig, got.Env, got.OutputType, got.Script)
		}
		if got.Flushes < 1 || got.StopError != "" {
			t.Errorf("flushes %d, stop error %q; want at least one flush and none", got.Flushes, got.StopError)
		}
	})

	t.Run("K6_OUT and the run's error", func(t *testing.T) {
		rep := filepath.Join(t.TempDir(), "report.json")
		r := run(t, bin, []string{"K6_OUT=probe=" + rep}, "run", "-q", "--no-summary", "-e", target, "-e", "ABORT=1", "output.js")
		if r.code != 108 {
			t.Fatalf("exit %d, want 108 (aborted by the script):\n%s", r.code, r.output)
		}
		got := readProbeReport(t, rep)
		if !strings.Contains(got.StopError, "enough") {
			t.Errorf("StopWithTestError got %q, want the abort's reason", got.StopError)
		}
		if got.Counts["iterations"] < 5 || got.Counts["corrected_latency"] != got.Counts["http_reqs"] {
			t.Errorf("counts %v, want the 5 iterations before the abort and one corrected_latency per request", got.Counts)
		}
	})

	t.Run("the output stops the test", func(t *testing.T) {
		rep := filepath.Join(t.TempDir(), "report.json")
		r := run(t, bin, []string{"PROBE_OUT_STOP=1"}, "run", "-q", "--no-summary", "-o", "probe="+rep, "-e", target, "output.js")
		if r.code != 255 || !strings.Contains(r.output, "output probe stopped the test: the probe's service went away") {
			t.Fatalf("exit %d, want 255 and the output's reason:\n%s", r.code, r.output)
		}
		if got := readProbeReport(t, rep); got.StopError != "output probe stopped the test: the probe's service went away" {
			t.Errorf("StopWithTestError got %q, want the output's own reason", got.StopError)
		}
	})

	t.Run("an error at Start", func(t *testing.T) {
		rep := filepath.Join(t.TempDir(), "report.json")
		r := run(t, bin, []string{"PROBE_OUT_START=fail"}, "run", "-q", "--no-summary", "-o", "probe="+rep, "-e", target, "output.js")
		want := "output probe (" + rep + "): the probe's service is not there"
		if r.code != 255 || !strings.Contains(r.output, want) || strings.Contains(r.output, "goroutine") {
			t.Errorf("exit %d, want 255 and %q:\n%s", r.code, want, r.output)
		}
		if _, err := os.Stat(rep); err == nil {
			t.Error("an output that failed to start was stopped and wrote its report")
		}
	})

	t.Run("an error in the constructor", func(t *testing.T) {
		r := run(t, bin, nil, "run", "-q", "--no-summary", "-o", "probe", "-e", target, "output.js")
		want := "could not create the 'probe' output: name the report file, as -o probe=FILE"
		if r.code != 104 || !strings.Contains(r.output, want) {
			t.Errorf("exit %d, want 104 and %q:\n%s", r.code, want, r.output)
		}
	})
}

// pointSums adds up the values of each metric's points in a json output
// file.
func pointSums(t *testing.T, path string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]float64{}
	for _, l := range lines(string(b)) {
		var p struct {
			Type   string `json:"type"`
			Metric string `json:"metric"`
			Data   struct {
				Value float64 `json:"value"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if p.Type == "Point" {
			sums[p.Metric] += p.Data.Value
		}
	}
	return sums
}

// checkProbeMetrics checks the extension's metrics in a summary export of
// metrics.js.
func checkProbeMetrics(t *testing.T, m map[string]map[string]any) {
	t.Helper()
	for _, c := range []struct {
		metric, stat string
		want         float64
	}{
		{"probe_ops", "count", 18},         // 6 work() pushed from goroutines, 6 record(2)
		{"probe_ops{op:work}", "count", 6}, // the work() tag
		{"probe_ops{kind:x}", "count", 12}, // tags from the script
		{"probev1_count", "count", 18},     // the go.k6.io/k6 extension
		{"probe_direct", "count", 2},       // sent on State.Samples directly
		// A metric of each instance's own registry, pushed by record and
		// sent by direct: all VUs' samples under its name (k6 shows one
		// VU's).
		{"probe_own", "count", 8},
		{"iterations", "count", 11},  // main's 6, open's 5; the cut scenario's one is interrupted
		{"probe_latency", "min", 10}, // work(10) waited at least 10 ms
	} {
		v, ok := m[c.metric][c.stat].(float64)
		if !ok || (c.stat == "min" && v < c.want) || (c.stat != "min" && v != c.want) {
			t.Errorf("%s %s = %v, want %v", c.metric, c.stat, m[c.metric][c.stat], c.want)
		}
	}
	// The open-model pushes of the latency trend record corrected_latency,
	// each its sample's value plus the iteration's lag, so never below it.
	raw, cor := m["probe_latency{op:timed}"], m["corrected_latency{metric:probe_latency}"]
	if raw["count"] != 5.0 || cor["count"] != 5.0 {
		t.Errorf("probe_latency{op:timed} count %v, corrected_latency{metric:probe_latency} count %v; want 5 each", raw["count"], cor["count"])
	}
	for _, stat := range []string{"min", "avg", "max"} {
		r, _ := raw[stat].(float64)
		c, ok := cor[stat].(float64)
		if !ok || r < 20 || c < r {
			t.Errorf("%s: probe_latency{op:timed} %v, corrected_latency{metric:probe_latency} %v; want at least 20 ms and corrected ≥ raw", stat, raw[stat], cor[stat])
		}
	}
	if _, ok := m["probe_late"]; ok {
		t.Errorf("probe_late was pushed after its VU's context was done and not dropped: %v", m["probe_late"])
	}
}

// surfaceAPI is one package of k6's extension surface: the names of it that
// the 19 published extensions of the reference sample use
// (shared/reference/xk6-and-browser.md §1.3), as "Name" for a top-level
// identifier and "Type.Member" for a field or method. Where the reference
// gives only a package's count (metrics, lib, httpext), the rest are our
// reading of what those extensions use, not checked name by name against
// their code. Missing are the names the layer lacks, which
// docs/extensions.md lists under "Not there yet".
type surfaceAPI struct {
	path    string // the package under go.k6.io/k6/v2
	alias   string // how the probe's source imports it
	names   []string
	missing []string
}

// surfaceNames is k6's extension surface, 163 names in 12 packages.
var surfaceNames = []surfaceAPI{
	{path: "js/modules", alias: "modules", names: []string{
		"Register", "Module", "Instance", "VU", "Exports", "VU.Context", "VU.Runtime", "Exports.Named",
		"VU.InitEnv", "VU.State", "Exports.Default", "VU.RegisterCallback",
	}},
	{path: "js/common", alias: "common", names: []string{
		"Throw", "NewInitContextError", "ApplyCustomUserTags", "IsNullish", "InitEnvironment",
		"InitEnvironment.Registry", "InitEnvironment.Logger", "InitEnvironment.LookupEnv",
	}},
	{path: "metrics", alias: "metrics", names: []string{
		"Sample", "Sample.Value", "Sample.Time", "Sample.TimeSeries", "Sample.Metadata",
		"TimeSeries", "TimeSeries.Metric", "TimeSeries.Tags", "PushIfNotDone",
		"Metric", "Metric.Name", "Metric.Type", "Metric.Contains",
		"Registry", "Registry.NewMetric", "Registry.MustNewMetric", "Registry.RootTagSet",
		"TagSet", "TagSet.Map", "TagSet.With", "TagSet.Get",
		"SampleContainer", "SampleContainer.GetSamples", "Samples",
		"TagsAndMeta", "TagsAndMeta.Tags", "TagsAndMeta.Metadata", "TagsAndMeta.SetTag",
		"ConnectedSamples", "ConnectedSamples.Samples", "ConnectedSamples.Tags", "ConnectedSamples.Time",
		"MetricType", "MetricType.String", "ValueType", "ValueType.String",
		"Counter", "Trend", "Gauge", "Rate", "Data", "Default", "Time", "D", "B",
		"BuiltinMetrics", "BuiltinMetrics.DataSent", "BuiltinMetrics.DataReceived", "BuiltinMetrics.HTTPReqs",
		"BuiltinMetrics.HTTPReqDuration", "BuiltinMetrics.Iterations",
		"SystemTagSet", "SystemTagSet.Has", "EnabledTags",
		"TagURL", "TagVU", "TagIter", "TagIP", "TagStatus", "TagScenario",
		"Threshold", "Threshold.Source", "Thresholds", "Thresholds.Thresholds", "NewThresholds",
		"Sink", "NewSink", "Sink.Add", "Sink.Format",
	}},
	{path: "lib", alias: "lib", names: []string{
		"State", "State.Samples", "State.Tags", "VUStateTags", "VUStateTags.GetCurrentValues", "VUStateTags.Modify",
		"State.TLSConfig", "State.Dialer", "DialContexter", "DialContexter.DialContext", "State.Options", "Options",
		"Options.Throw", "Options.MaxRedirects", "Options.NoConnectionReuse", "Options.NoVUConnectionReuse",
		"Options.SystemTags", "Options.UserAgent", "State.BuiltinMetrics", "State.Logger", "State.VUID",
		"State.Iteration", "State.CookieJar", "State.GetAddrResolver", "AddrResolver",
	}},
	{path: "output", alias: "output", names: []string{
		"Output", "Params", "Params.ConfigArgument", "Params.Environment", "Params.JSONConfig", "Params.Logger",
		"SampleBuffer", "SampleBuffer.GetBufferedSamples", "NewPeriodicFlusher", "PeriodicFlusher",
		"PeriodicFlusher.Stop", "RegisterExtension", "WithThresholds",
	}},
	{path: "lib/types", alias: "types", names: []string{
		"Duration", "Duration.String", "NullDuration", "NullDuration.Valid", "NullDuration.Duration",
		"NewNullDuration", "NullDurationFrom", "NullDuration.UnmarshalText", "NullDuration.TimeDuration",
	}},
	{path: "js/promises", alias: "promises", names: []string{"New"}},
	{path: "js/modules/k6/http", alias: "k6http", names: []string{"CookieJar", "CookieJar.Jar"}},
	{path: "lib/netext", alias: "netext", names: []string{"TLS_1_0", "TLS_1_1", "TLS_1_2", "TLS_1_3"}},
	{path: "ext", alias: "ext", names: []string{"Get", "JSExtension"}},
	// k6's HTTP engine, which xk6-loki drives.
	{path: "lib/netext/httpext", alias: "httpext", names: []string{
		"MakeRequest", "ParsedHTTPRequest", "ParsedHTTPRequest.URL", "ParsedHTTPRequest.Body",
		"ParsedHTTPRequest.Req", "ParsedHTTPRequest.Timeout", "ParsedHTTPRequest.Auth",
		"ParsedHTTPRequest.Throw", "ParsedHTTPRequest.ResponseType", "ParsedHTTPRequest.Redirects",
		"Response", "Response.Body", "Response.Status", "Response.Headers", "Response.Error",
		"NewResponse", "NewURL",
	}},
	// Only xk6-sql's driver-test helper uses it; no binary needs it.
	{path: "js/modulestest", alias: "modulestest", names: []string{"NewRuntime"}},
}

// TestSurfaceNames checks the list of k6's extension surface against the
// probe extension's source: each name the list says is covered appears
// there as the probe's code would use it (pkg.Name for a top-level
// identifier, .Member for a field or method), so a name dropped from the
// probe drops out of the count, and the build of TestXK6Extensions fails
// when the layer drops or changes one the probe uses.
func TestSurfaceNames(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "xk6probe", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the probe's sources: %v", err)
	}
	var src strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	total, covered := 0, 0
	for _, api := range surfaceNames {
		total += len(api.names) + len(api.missing)
		for _, name := range api.names {
			covered++
			typ, member, isMember := strings.Cut(name, ".")
			if !strings.Contains(src.String(), api.alias+"."+typ) {
				t.Errorf("the probe does not use %s.%s (go.k6.io/k6/v2/%s)", api.alias, typ, api.path)
			}
			if isMember && !regexp.MustCompile(`\.`+member+`\b`).MatchString(src.String()) {
				t.Errorf("the probe does not use %s of go.k6.io/k6/v2/%s", name, api.path)
			}
		}
	}
	if total != 163 {
		t.Errorf("the surface has %d names, want the reference's 163", total)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "extensions.md"))
	if err != nil {
		t.Fatal(err)
	}
	claim := fmt.Sprintf("%d of %d names", covered, total)
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), claim) {
		t.Errorf("docs/extensions.md does not say %q", claim)
	}
}

// TestModulesTestRuntime runs the own test of the extension in
// testdata/xk6modtest, as its author would with go test, against this
// checkout's layer: js/modulestest's NewRuntime, a module instance made in
// its init context, a script run on its event loop, the sample the module
// pushed and the promise it resolved from another goroutine.
func TestModulesTestRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Go tool on a module of its own; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const devel = "v0.0.0-00010101000000-000000000000"
	repl, err := k6api.Write(filepath.Join(dir, "k6api"), devel)
	if err != nil {
		t.Fatal(err)
	}
	ext := filepath.Join(dir, "ext")
	if err := os.CopyFS(ext, os.DirFS("testdata/xk6modtest")); err != nil {
		t.Fatal(err)
	}
	// metronome's checksums vouch for the dependencies, as in metronome build.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ext, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	// The go line of the toolchain, as go mod init writes it in metronome
	// build: with an older one the Go tool loads the whole module graph,
	// which the module cache alone does not hold.
	edit := []string{"mod", "edit", "-require=github.com/metronome-load/metronome@" + devel, "-replace=github.com/metronome-load/metronome=" + root}
	if v, ok := strings.CutPrefix(runtime.Version(), "go"); ok {
		edit = append(edit, "-go="+v)
	}
	// metronome's own requirements too, as metronome build adds them, so
	// that the Go tool reads no go.mod beyond the module cache's.
	for mod, v := range requires(t, filepath.Join(root, "go.mod")) {
		if mod != "github.com/metronome-load/metronome" {
			edit = append(edit, "-require="+mod+"@"+v)
		}
	}
	for _, r := range k6api.Requires() {
		edit = append(edit, "-require="+r)
	}
	for _, r := range repl {
		edit = append(edit, "-replace="+r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env := append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off")
	for _, args := range [][]string{edit, {"test", "-count=1", "-v", "-run", "^TestAdd$", "."}} {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir, cmd.Env = ext, env
		out, err := cmd.CombinedOutput()
		if err != nil || (args[0] == "test" && !strings.Contains(string(out), "--- PASS: TestAdd")) {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
