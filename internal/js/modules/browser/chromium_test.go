package browser

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/metrics"
)

// The launch settings come from k6's variables: a path that is not there
// is k6's error with the path, bad values name the variable, and
// K6_BROWSER_ARGS becomes Chromium flags without their dashes.
func TestReadSettings(t *testing.T) {
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	_, err := readSettings(env(map[string]string{envExecutablePath: "/nonexistent/chrome"}))
	if !errors.Is(err, errNotAtPath) || !strings.Contains(err.Error(), "finding browser executable: ") || !strings.HasSuffix(err.Error(), ": /nonexistent/chrome") {
		t.Errorf("missing path: %v", err)
	}
	for k, v := range map[string]string{envHeadless: "maybe", envTimeout: "-1s"} {
		_, err := readSettings(env(map[string]string{envExecutablePath: "/bin/sh", k: v}))
		if err == nil || !strings.HasPrefix(err.Error(), k+": ") {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
	s, err := readSettings(env(map[string]string{envExecutablePath: "/bin/sh", envHeadless: "false", envTimeout: "5s", envArgs: "no-sandbox, --lang=de ,"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.path != "/bin/sh" || s.headless || s.timeout != 5*time.Second || strings.Join(s.args, "|") != "no-sandbox|lang=de" {
		t.Errorf("settings %+v", s)
	}
	d, err := readSettings(env(map[string]string{envExecutablePath: "/bin/sh"}))
	if err != nil || !d.headless || d.timeout != 30*time.Second {
		t.Errorf("defaults %+v %v", d, err)
	}
}

// Selectors as scripts write them become the in-page engine's parts.
func TestParseSelector(t *testing.T) {
	for sel, want := range map[string]string{
		"#a .b":          "css:#a .b",
		"css=div":        "css:div",
		"xpath=//p":      "xpath://p",
		"//li[2]":        "xpath://li[2]",
		`text="Sign in"`: "text:Sign in:exact",
		"text=sign":      "text:sign",
		"form >> nth=1":  "css:form,nth:1",
		"ul >> text=two": "css:ul,text:two",
	} {
		var got []string
		for _, p := range parseSelector(sel) {
			s := p.Kind + ":" + fmt.Sprint(p.Value)
			if p.Exact {
				s += ":exact"
			}
			got = append(got, s)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%q: %s, want %s", sel, strings.Join(got, ","), want)
		}
	}
}

// Stopping the browser leaves neither a process of its group nor its
// profile folder behind, even though its renderers outlive the browser
// process chromedp kills by a moment and write to the profile meanwhile.
func TestStopReapsEverything(t *testing.T) {
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skip("no Chromium at /usr/bin/chromium; CI installs it (.ci/run)")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<h1>Hello</h1>")
	}))
	defer srv.Close()
	inlet := metrics.NewInlet(func([]metrics.Sample) {})
	var p process
	root, err := p.get(&modules.Run{Samples: inlet, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	pid := chromedp.FromContext(root).Browser.Process().Pid
	tab, cancel := chromedp.NewContext(root)
	defer cancel()
	if _, err := chromedp.Run(tab, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	if !groupRuns(pid) {
		t.Fatal("groupRuns says the running browser's group is gone")
	}
	inlet.Close() // the run's end stops the browser before Close returns
	if groupRuns(pid) {
		t.Error("a process of the browser's group still runs after the run's end")
	}
	left, _ := os.ReadDir(tmp)
	for _, e := range left {
		t.Errorf("%s is left in the temporary folder", e.Name())
	}
}
