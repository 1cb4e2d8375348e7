package browser

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
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
