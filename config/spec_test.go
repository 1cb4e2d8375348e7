package config

import (
	"reflect"
	"strings"
	"testing"
)

// Every option field of Options has its entry in the option table, and
// every entry points at a field of its own: decoding, flags, K6_*
// variables, layering and defaults all go through the table, so a field
// without an entry would be silently ignored by all of them.
func TestOptionTableCoversOptions(t *testing.T) {
	var o Options
	fields := map[uintptr]string{}
	rt := reflect.TypeFor[Options]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if _, ok := specByName[name]; !ok {
			t.Errorf("Options.%s (%q) has no entry in the option table", f.Name, name)
		}
		fields[reflect.ValueOf(&o).Elem().Field(i).Addr().Pointer()] = name
	}
	for _, s := range specs {
		p := reflect.ValueOf(s.field(&o)).Pointer()
		if fields[p] != s.name {
			t.Errorf("option %s points at the field of %q", s.name, fields[p])
		}
	}
}

// Apply copies, through the table, every option a higher tier sets, and
// Consolidate gives each option with a default that default.
func TestApplyAndDefaultsFollowTheTable(t *testing.T) {
	o, err := Parse([]byte(`{"maxRedirects": 3, "summaryTrendStats": ["avg"], "tags": {"a": "b"}, "httpDebug": "full"}`), "script options")
	if err != nil {
		t.Fatal(err)
	}
	empty := &Options{Tags: map[string]string{}}
	r, err := Consolidate(o, empty)
	if err != nil {
		t.Fatal(err)
	}
	if *r.MaxRedirects != 3 || r.SummaryTrendStats[0] != "avg" || r.Tags["a"] != "b" || *r.HTTPDebug != "full" {
		t.Errorf("layered options lost a value: %+v", r)
	}
	if *r.Batch != DefaultBatch || r.SetupTimeout.Std() != DefaultSetupTimeout || *r.UserAgent != DefaultUserAgent() ||
		len(r.SystemTags) != len(DefaultSystemTags) {
		t.Errorf("defaults not applied: batch %d, setupTimeout %s, userAgent %q, systemTags %v",
			*r.Batch, r.SetupTimeout, *r.UserAgent, r.SystemTags)
	}
	r.SystemTags[0] = "changed"
	if DefaultSystemTags[0] == "changed" {
		t.Error("the default list was shared, not copied")
	}
}
