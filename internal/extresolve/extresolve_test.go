package extresolve

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// TestRegistryIsWellFormed checks every entry of the table: a k6/x import
// path, a valid module path, a known tier, and versions that are valid,
// canonical, and in ascending order without repeats; no import appears
// twice.
// modulePath is the shape of every module the registry lists.
var modulePath = regexp.MustCompile(`^github\.com/[A-Za-z0-9-]+/[A-Za-z0-9._-]+$`)

func TestRegistryIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range registry {
		if !strings.HasPrefix(e.Import, "k6/x/") || len(e.Import) == len("k6/x/") || strings.ContainsAny(e.Import, " \"'") {
			t.Errorf("%+v: import %q is not k6/x/NAME", e, e.Import)
		}
		if seen[e.Import] {
			t.Errorf("%s is listed twice", e.Import)
		}
		seen[e.Import] = true
		if !modulePath.MatchString(e.Module) {
			t.Errorf("%s: module %q is not a github.com/OWNER/REPO path", e.Import, e.Module)
		}
		if e.Tier != "official" && e.Tier != "community" {
			t.Errorf("%s: tier %q", e.Import, e.Tier)
		}
		if len(e.Versions) == 0 {
			t.Errorf("%s: no versions", e.Import)
		}
		var prev *semver.Version
		for _, v := range e.Versions {
			sv, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
			if err != nil || !strings.HasPrefix(v, "v") {
				t.Errorf("%s: version %q is not vMAJOR.MINOR.PATCH", e.Import, v)
				continue
			}
			if prev != nil && !prev.LessThan(sv) {
				t.Errorf("%s: versions out of order at %s", e.Import, v)
			}
			prev = sv
		}
	}
	if len(registry) < 20 {
		t.Errorf("%d entries; the registry's two files list 22 import paths", len(registry))
	}
}

func TestLookupAndPick(t *testing.T) {
	e, ok := Lookup("k6/x/faker")
	if !ok || e.Module != "github.com/grafana/xk6-faker" || e.Latest() != "v0.5.2" {
		t.Fatalf("Lookup(k6/x/faker) = %+v, %v", e, ok)
	}
	if _, ok := Lookup("k6/x/nope"); ok {
		t.Error("Lookup found k6/x/nope")
	}
	for c, want := range map[string]string{"": "v0.5.2", "< 0.5": "v0.4.4", "~0.4.1": "v0.4.4", "=0.4.2": "v0.4.2", "> 1": ""} {
		var con *semver.Constraints
		if c != "" {
			con = mustConstraint(c)
		}
		got, ok := e.Pick(con)
		if got != want || ok != (want != "") {
			t.Errorf("Pick(%q) = %q, %v; want %q", c, got, ok, want)
		}
	}
}

// write makes the files (path → content) under a new directory.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestScan(t *testing.T) {
	dir := write(t, map[string]string{
		"script.js": `#!/usr/bin/env metronome
// leading comment
"use k6 with k6/x/faker >= 0.4, < 0.5";
'use strict';
"use k6 > 1.0";
import http from 'k6/http';
import redis from "k6/x/redis";
import { helper } from './lib/helper.js';
// import kafka from 'k6/x/kafka';
/* import x from 'k6/x/commented';
   import y from 'k6/x/commented2'; */
const s = "// not a comment"; import 'k6/x/faker';
export default function () { helper(); }
`,
		"lib/helper.js": `export { a } from "../shared.ts";
const sql = require('k6/x/sql');
export async function helper() { await import("k6/x/redis"); }
`,
		"shared.ts": `"use k6 with k6/x/mqtt ~0.2";
import mqtt from 'k6/x/mqtt';
import missing from './missing.js';
import './lib/helper.js'; // a cycle
export const a: number = 1;
`,
	})
	needs, err := Scan(filepath.Join(dir, "script.js"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range needs {
		c := ""
		if n.Constraint != nil {
			c = " " + n.Constraint.String()
		}
		where, _ := filepath.Rel(dir, n.Where)
		got = append(got, n.Import+" "+filepath.ToSlash(where)+c)
	}
	want := []string{
		"k6/x/faker script.js:12 >=0.4 <0.5",
		"k6/x/mqtt shared.ts:2 ~0.2",
		"k6/x/redis script.js:7",
		"k6/x/sql lib/helper.js:2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Scan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestScanNamesFilesAsGiven checks that a relative script path gives
// relative places, as the loader's messages do.
func TestScanNamesFilesAsGiven(t *testing.T) {
	dir := write(t, map[string]string{
		"a.js":     "import './sub/b.js';\n",
		"sub/b.js": "\n\nimport tcp from 'k6/x/tcp';\n",
	})
	t.Chdir(dir)
	needs, err := Scan("a.js")
	if err != nil || len(needs) != 1 || needs[0].Where != filepath.Join("sub", "b.js")+":3" {
		t.Fatalf("Scan = %+v, %v", needs, err)
	}
}

func TestScanDirectiveErrors(t *testing.T) {
	for name, src := range map[string]string{
		`script.js: the directive "use k6 with k6/x/redis >> 1": ">> 1" is not a version constraint`:                         `"use k6 with k6/x/redis >> 1"; import 'k6/x/redis';`,
		`script.js: the directive "use k6 with k6/x/redis < 0.4" contradicts an earlier one, which asks for k6/x/redis >0.4`: "'use k6 with k6/x/redis > 0.4'\n'use k6 with k6/x/redis < 0.4'\nimport 'k6/x/redis';",
	} {
		dir := write(t, map[string]string{"script.js": src})
		t.Chdir(dir)
		_, err := Scan("script.js")
		if err == nil || !strings.HasPrefix(err.Error(), name) {
			t.Errorf("Scan(%q) = %v, want %q", src, err, name)
		}
	}
}

func TestWiths(t *testing.T) {
	needs := []Need{
		{Import: "k6/x/faker", Where: "s.js:1", Constraint: mustConstraint("< 0.5")},
		{Import: "k6/x/probe", Where: "s.js:2"},
		{Import: "k6/x/redis", Where: "s.js:3"},
		{Import: "k6/x/sql", Where: "s.js:4"},
	}
	mods := map[string]string{"k6/x/probe": "example.com/xk6probe=../probe", "k6/x/sql": "example.com/sql@v1.9.0"}
	got, err := Withs(needs, mods)
	want := []string{"example.com/sql@v1.9.0", "example.com/xk6probe=../probe", "github.com/grafana/xk6-faker@v0.4.4", "github.com/grafana/xk6-redis@v0.4.2"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Withs = %q, %v; want %q", got, err, want)
	}

	_, err = Withs([]Need{{Import: "k6/x/unlisted", Where: "s.js:9"}}, nil)
	if err == nil || err.Error() != "s.js:9: "+Missing("k6/x/unlisted") {
		t.Errorf("unlisted: %v", err)
	}
	_, err = Withs([]Need{{Import: "k6/x/redis", Where: "s.js:9", Constraint: mustConstraint(">= 9")}}, nil)
	wantErr := "s.js:9: k6/x/redis >=9: k6's extension registry lists no version of github.com/grafana/xk6-redis that satisfies it (it lists v0.3.6, v0.4.0, v0.4.2); name one in METRONOME_EXTENSION_MODULES"
	if err == nil || err.Error() != wantErr {
		t.Errorf("unsatisfiable: %v\nwant %s", err, wantErr)
	}
}

func TestParseModules(t *testing.T) {
	got, err := ParseModules(" k6/x/a=example.com/a@v1.0.0, k6/x/b=example.com/b=../b\tk6/x/c/d=example.com/c ")
	want := map[string]string{"k6/x/a": "example.com/a@v1.0.0", "k6/x/b": "example.com/b=../b", "k6/x/c/d": "example.com/c"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseModules = %v, %v", got, err)
	}
	for _, bad := range []string{"k6/x/a", "k6/x/=m", "redis=m", "k6/x/a==dir", "k6/x/a="} {
		if _, err := ParseModules(bad); err == nil || !strings.Contains(err.Error(), "k6/x/NAME=MODULE[@VERSION][=REPLACEMENT]") {
			t.Errorf("ParseModules(%q) = %v", bad, err)
		}
	}
}

func TestKey(t *testing.T) {
	a := Key([]string{"x@v1", "y@v2"}, "metronome v1.0.0 linux/amd64")
	if b := Key([]string{"y@v2", "x@v1"}, "metronome v1.0.0 linux/amd64"); a != b {
		t.Errorf("order changes the key: %s, %s", a, b)
	}
	for _, other := range []string{
		Key([]string{"x@v1", "y@v3"}, "metronome v1.0.0 linux/amd64"),
		Key([]string{"x@v1"}, "metronome v1.0.0 linux/amd64"),
		Key([]string{"x@v1", "y@v2"}, "metronome v1.0.1 linux/amd64"),
		Key([]string{"x@v1\ny@v2"}, "metronome v1.0.0 linux/amd64"),
	} {
		if other == a {
			t.Errorf("different builds share the key %s", a)
		}
	}
	if len(a) != 24 || strings.Trim(a, "0123456789abcdef") != "" {
		t.Errorf("key %q is not 24 hex digits", a)
	}
}

func TestCacheDir(t *testing.T) {
	d, err := CacheDir(map[string]string{CacheEnv: "rel/cache"})
	if err != nil || !filepath.IsAbs(d) || !strings.HasSuffix(d, filepath.Join("rel", "cache")) {
		t.Errorf("CacheDir with %s = %q, %v", CacheEnv, d, err)
	}
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	t.Setenv("HOME", "/x/home")
	d, err = CacheDir(map[string]string{})
	if want, _ := os.UserCacheDir(); err != nil || d != filepath.Join(want, "metronome", "builds") {
		t.Errorf("CacheDir = %q, %v", d, err)
	}
}

func mustConstraint(s string) *semver.Constraints {
	c, err := semver.NewConstraint(s)
	if err != nil {
		panic(err)
	}
	return c
}

// TestTreeHash checks that the digest of a folder changes with a file's
// content or name, and not with hidden files, tests or test data.
func TestTreeHash(t *testing.T) {
	dir := write(t, map[string]string{"go.mod": "module x\n", "a/b.go": "package a\n"})
	hash := func() string {
		t.Helper()
		h, err := TreeHash(dir)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	first := hash()
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"a/b_test.go": "package a\n", "a/testdata/x.txt": "data"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if h := hash(); h != first {
		t.Error("a hidden folder, a test file or test data changes the digest")
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b.go"), []byte("package b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := hash()
	if edited == first {
		t.Error("an edit leaves the digest as it was")
	}
	if err := os.Rename(filepath.Join(dir, "a", "b.go"), filepath.Join(dir, "a", "c.go")); err != nil {
		t.Fatal(err)
	}
	if hash() == edited {
		t.Error("a renamed file leaves the digest as it was")
	}
}
