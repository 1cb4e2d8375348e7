package e2e

import (
	"os"
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
