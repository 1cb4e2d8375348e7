package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mask is what a fetched secret is shown as.
const mask = "***SECRET_REDACTED***"

// k6/secrets with two file sources prints, secrets masked, the console
// lines k6 v2.2.0 printed for the same script (testdata/secrets/k6.txt),
// and the iteration's error hides the secret too.
func TestSecretsLikeK6(t *testing.T) {
	t.Parallel()
	r := metronome(t, runSpec{args: []string{"run", "-q", "--no-summary",
		"--secret-source=file=name=main,filename=" + script("secrets/secrets.txt") + ",default",
		"--secret-source=file=name=more,filename=" + script("secrets/more.txt"),
		script("secrets/secrets.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(script("secrets/k6.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	line := regexp.MustCompile(`^time="[^"]+" level=(\w+) msg=("(?:[^"\\]|\\.)*"|\S+) source=console$`)
	words := map[string]string{"info": "INFO", "warning": "WARN", "error": "ERRO"}
	var got []string
	seen := map[string]bool{}
	for _, l := range strings.Split(r.stderr, "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		msg, err := strconv.Unquote(m[2])
		if err != nil {
			msg = m[2]
		}
		if g := words[m[1]] + " " + msg; !seen[g] {
			seen[g] = true
			got = append(got, g)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("console lines differ from k6's\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !regexp.MustCompile(`Error: boom \*\*\*SECRET_REDACTED\*\*\*\\n\\tat \S+ \(file://\S+/secrets\.js:31:8\(\d+\)\)`).MatchString(r.stderr) || strings.Contains(r.stderr, "s3cr3t") {
		t.Errorf("the iteration's error should name its line and hide the secret\nstderr:\n%s", r.stderr)
	}
}

// A --secret-source k6 does not know is one sentence naming the flag, and
// the run does not start.
func TestSecretSourceMistakes(t *testing.T) {
	t.Parallel()
	for arg, want := range map[string]string{
		"env":                                `--secret-source: no secret source for type "env" for configuration "env"`,
		"file=" + script("secrets/none.txt"): "--secret-source: open " + script("secrets/none.txt") + ": no such file or directory",
		"file=name=a,filename=x,mode=1":      `--secret-source: unknown configuration key for file secret source "mode"`,
	} {
		r := metronome(t, runSpec{args: []string{"run", "-q", "--no-summary", "--secret-source=" + arg, script("secrets/secrets.js")}})
		if r.code != 104 || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("--secret-source=%s: exit %d, want 104 and the one line %q\nstderr:\n%s", arg, r.code, want, r.stderr)
		}
	}
}

// A fetched secret is masked in every message that leaves the run: log
// lines (to a file here), the last error line of exec.test.abort(),
// exec.test.fail() and a failing teardown, the error line of a failing
// handleSummary, the summary on stdout, --summary-export, handleSummary's
// stdout and files, the json, (gzipped) csv and result outputs and the
// report. k6
// v2.2.0 masks the four error messages too; it writes handleSummary's
// output and the outputs' tags in clear.
func TestSecretsHiddenEverywhere(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	const secret, mask = "s3cr3t-value", "***SECRET_REDACTED***"
	for _, c := range []struct {
		w    string
		code int
		// where, besides the files, the mask must show
		stdout, stderr string
	}{
		{"", 0, "summary " + mask, ""},
		{"abort", 108, "", `level=error msg="test aborted: abort ` + mask},
		{"fail", 110, "", `level=error msg="test marked as failed: fail ` + mask},
		// Both are async: k6 logs their rejection as "Uncaught (in
		// promise)", and exits 255 for teardown's.
		{"teardown", 255, "", `msg="Uncaught (in promise) Error: teardown ` + mask},
		{"handleSummary", 0, "check " + mask, `msg="Uncaught (in promise) Error: handleSummary ` + mask},
	} {
		dir := t.TempDir()
		path := func(name string) string { return filepath.Join(dir, name) }
		args := []string{"run", "-q", "--secret-source=file=" + script("secrets/secrets.txt"),
			"-e", "TARGET=" + tg.URL, "-e", "W=" + c.w, "-e", "HS_FILE=" + path("hs.txt"),
			"--summary-export", path("export.json"), "-o", "json=" + path("out.json"), "-o", "csv=" + path("out.csv.gz"),
			"-o", "result=" + path("out.result")}
		files := []string{"export.json", "out.json", "out.csv.gz", "report.html", "out.result"}
		if c.w == "" {
			args = append(args, "--log-output=file="+path("log.txt"))
			files = append(files, "log.txt", "hs.txt")
		}
		r := metronome(t, runSpec{
			args: append(args, script("secrets/everywhere.js")),
			env:  []string{"K6_WEB_DASHBOARD=true", "K6_WEB_DASHBOARD_PORT=-1", "K6_WEB_DASHBOARD_EXPORT=" + path("report.html")},
		})
		if r.code != c.code {
			t.Errorf("W=%s: exit code %d, want %d\nstderr:\n%s", c.w, r.code, c.code, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, secret) || !strings.Contains(r.stdout, c.stdout) || !strings.Contains(r.stderr, c.stderr) {
			t.Errorf("W=%s: want %q on stdout and %q on stderr, and no secret\nstdout:\n%s\nstderr:\n%s", c.w, c.stdout, c.stderr, r.stdout, r.stderr)
		}
		if c.w != "" && !strings.Contains(r.stderr, mask) {
			t.Errorf("W=%s: the error does not show the mask\nstderr:\n%s", c.w, r.stderr)
		}
		for _, name := range files {
			b := readMaybeGzip(t, path(name))
			if bytes.Contains(b, []byte(secret)) || !bytes.Contains(b, []byte(mask)) {
				t.Errorf("W=%s: %s holds the secret or not the mask:\n%s", c.w, name, b)
			}
		}
	}
}

// readMaybeGzip reads a file, decompressed when its name ends in .gz.
func readMaybeGzip(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, ".gz") {
		return b
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err = io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// Two fetched secrets, put by testdata/secrets/shown.js in a URL's query,
// tag values, request names, a group, a check, log lines, an iteration's
// error, a custom metric's name, a threshold and the setup data, are
// shown nowhere, in no spelling: not in any file the run writes with
// every local output on (json, csv, result, hdrlog, the dashboard's
// report, --summary-export, handleSummary's file, the log file with
// --http-debug=full dumps), nor on its standard streams, nor in any
// answer of the REST API and of the live dashboard polled while it runs,
// nor in what metronome merge and metronome report make of its files.
// Both secrets hold "Zq9", which nothing else does, so even a partial or
// differently escaped spelling is found; the mask must show in each place
// the secrets went, so that the test cannot pass on empty answers.
func TestSecretNeverShown(t *testing.T) {
	t.Parallel()
	const leak = "Zq9"
	tg := newTarget(t)
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(path("secrets.txt"), []byte("token=tok3n-Zq9x+/=\nmetric=s3cr3tZq9metric\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	in := spawn(t, ctx, []string{"K6_WEB_DASHBOARD_PORT=0", "K6_WEB_DASHBOARD_PERIOD=1s", "K6_WEB_DASHBOARD_EXPORT=" + path("report.html")},
		"run", "--secret-source=file="+path("secrets.txt"), "--address=127.0.0.1:0",
		"-e", "TARGET="+tg.URL, "-e", "DURATION=4s", "-e", "HS_FILE="+path("hs.json"),
		"--summary-export", path("export.json"), "-o", "json="+path("out.json"), "-o", "csv="+path("out.csv"),
		"-o", "result="+path("out.result"), "-o", "hdrlog="+path("out.hlog"), "-o", "web-dashboard",
		"--http-debug=full", "--log-output=file="+path("log.txt"), script("secrets/shown.js"))

	// What the REST API and the dashboard answered while the test ran.
	served := map[string]*strings.Builder{}
	answer := func(where, url string) string {
		resp, err := http.Get(url)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if served[where] == nil {
			served[where] = &strings.Builder{}
		}
		served[where].Write(b)
		return string(b)
	}
	apiRE := regexp.MustCompile(`REST API listening on ([^\s"]+)`)
	dashRE := regexp.MustCompile(`web-dashboard \((http://127\.0\.0\.1:\d+)`)
	var api, dash string
	for running := true; running; {
		select {
		case <-in.exited:
			running = false
		case <-time.After(200 * time.Millisecond):
		}
		if api == "" {
			b, _ := os.ReadFile(path("log.txt"))
			if m := apiRE.FindSubmatch(b); m != nil {
				api = "http://" + string(m[1])
			}
		}
		if dash == "" {
			if m := dashRE.FindStringSubmatch(in.stdout.String()); m != nil {
				dash = m[1]
			}
		}
		if api != "" && running {
			answer("/v1/status", api+"/v1/status")
			answer("/v1/setup", api+"/v1/setup")
			var list struct{ Data []struct{ ID string } }
			for _, kind := range []string{"metrics", "groups"} {
				if json.Unmarshal([]byte(answer("/v1/"+kind, api+"/v1/"+kind)), &list) == nil {
					for _, r := range list.Data {
						answer("/v1/"+kind+"/{id}", api+"/v1/"+kind+"/"+url.PathEscape(r.ID))
					}
				}
			}
		}
		if dash != "" && running {
			answer("the live page", dash+"/")
			answer("/api/content", dash+"/api/content")
		}
	}
	if code := in.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", code, in.stderr.String())
	}

	shown := map[string]string{"stdout": in.stdout.String(), "stderr": in.stderr.String()}
	for where, b := range served {
		shown[where] = b.String()
	}
	for _, name := range []string{"log.txt", "export.json", "hs.json", "out.json", "out.csv", "out.result", "out.hlog", "report.html"} {
		shown[name] = string(readMaybeGzip(t, path(name)))
	}
	// What the tools that read the files afterwards show.
	for _, args := range [][]string{
		{"merge", path("out.result")}, {"merge", path("out.hlog")}, {"report", path("out.hlog"), "-o", path("report2.html")},
	} {
		r := metronome(t, runSpec{args: args})
		if r.code != 0 {
			t.Errorf("metronome %s: exit code %d\nstderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		shown["metronome "+args[0]+" "+filepath.Base(args[1])] = r.stdout + r.stderr
	}
	shown["report2.html"] = string(readMaybeGzip(t, path("report2.html")))

	for where, text := range shown {
		if i := strings.Index(text, leak); i >= 0 {
			t.Errorf("%s shows a secret: …%s…", where, text[max(0, i-80):min(len(text), i+80)])
		}
	}
	masked := []string{"stdout", "/v1/metrics", "/v1/metrics/{id}", "/v1/groups", "/v1/groups/{id}", "/v1/setup",
		"the live page", "/api/content", "log.txt", "export.json", "hs.json", "out.json", "out.csv", "out.result",
		"out.hlog", "report.html", "metronome merge out.result", "metronome merge out.hlog", "report2.html"}
	for _, where := range masked {
		if !strings.Contains(shown[where], mask) {
			t.Errorf("%s does not show the mask where the secrets went (%d bytes)", where, len(shown[where]))
		}
	}
	if !strings.Contains(shown["log.txt"], "GET /?token="+mask+" HTTP/1.1") {
		t.Errorf("log.txt holds no --http-debug dump of the request with the token")
	}
}
