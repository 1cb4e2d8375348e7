package e2e

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

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
	line := regexp.MustCompile(`^(\w+)\[\d+\] (.*) source=console$`)
	var got []string
	seen := map[string]bool{}
	for _, l := range strings.Split(r.stderr, "\n") {
		if m := line.FindStringSubmatch(l); m != nil && !seen[m[1]+" "+m[2]] {
			seen[m[1]+" "+m[2]] = true
			got = append(got, m[1]+" "+m[2])
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("console lines differ from k6's\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(r.stderr, "secrets.js:31:8: Error: boom ***SECRET_REDACTED***") || strings.Contains(r.stderr, "s3cr3t") {
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
// exec.test.fail() and a failing teardown, the warning of a failing
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
		{"abort", 108, "", "ERROR: test aborted by the script: abort " + mask},
		{"fail", 110, "", "ERROR: test marked as failed by the script: fail " + mask},
		{"teardown", 107, "", "Error: teardown " + mask},
		{"handleSummary", 0, "check " + mask, "handleSummary() failed, printing the default summary instead: "},
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
