package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestCheckedIn fails when metronome.json is not what the generator
// writes: edit cmd/grafana-dashboard/main.go, then run go generate ./examples/grafana/...
func TestCheckedIn(t *testing.T) {
	want, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../examples/grafana/metronome.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("examples/grafana/metronome.json is stale: run go generate ./examples/grafana/...")
	}
}

// TestTargets checks what Grafana needs of every query: a data source, an
// expression and a refId unique within its panel.
func TestTargets(t *testing.T) {
	js, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		SchemaVersion int     `json:"schemaVersion"`
		Panels        []panel `json:"panels"`
	}
	if err := json.Unmarshal(js, &d); err != nil {
		t.Fatal(err)
	}
	if d.SchemaVersion == 0 {
		t.Error("no schemaVersion")
	}
	ids := map[int]bool{}
	exprs := 0
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.ID == 0 || ids[p.ID] {
				t.Errorf("panel %q: id %d missing or repeated", p.Title, p.ID)
			}
			ids[p.ID] = true
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				exprs++
				if tg.Expr == "" || tg.RefID == "" || refs[tg.RefID] || tg.Datasource.UID != "${datasource}" {
					t.Errorf("panel %q: target %+v", p.Title, tg)
				}
				refs[tg.RefID] = true
				if !strings.Contains(tg.Expr, `testid=~"$testid"`) {
					t.Errorf("panel %q: %s does not filter on the test id", p.Title, tg.Expr)
				}
			}
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if exprs < 15 {
		t.Errorf("%d queries", exprs)
	}
}

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr       string `json:"expr"`
		RefID      string `json:"refId"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}
