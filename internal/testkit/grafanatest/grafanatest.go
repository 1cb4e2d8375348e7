// Package grafanatest reads the Prometheus queries of a Grafana dashboard
// (its panels' targets and its query variables) and runs them against a
// promtest.Server the way Grafana would, so that a test can check that a
// dashboard answers every query from a run's data.
package grafanatest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/promtest"
)

// Query is one query of a dashboard, as written in it.
type Query struct {
	// Panel is the panel's title, or "variable $name" for a variable.
	Panel string
	// RefID is the target's refId, or the variable's name.
	RefID string
	// Expr is the PromQL of a target, or the query of a variable
	// (label_values(...), metrics(...), query_result(...)), with the
	// dashboard's variables not yet expanded.
	Expr string
	// Variable is true for a variable's query.
	Variable bool
}

// String names the query as "panel / refId".
func (q Query) String() string { return q.Panel + " / " + q.RefID }

// Queries returns the queries of a dashboard's JSON: its query variables,
// then the targets of every panel, rows' nested panels included, in the
// order of the file. Targets without an expression are left out.
func Queries(dashboard []byte) ([]Query, error) {
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr  string `json:"expr"`
			RefID string `json:"refId"`
		} `json:"targets"`
		Panels []json.RawMessage `json:"panels"`
	}
	var d struct {
		Panels     []json.RawMessage `json:"panels"`
		Templating struct {
			List []struct {
				Name       string          `json:"name"`
				Type       string          `json:"type"`
				Query      json.RawMessage `json:"query"`
				Definition string          `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(dashboard, &d); err != nil {
		return nil, fmt.Errorf("reading the dashboard: %w", err)
	}
	var qs []Query
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		// The query is a string, or an object holding it (newer
		// schemas); the definition repeats it.
		var expr string
		if json.Unmarshal(v.Query, &expr) != nil {
			var obj struct {
				Query string `json:"query"`
			}
			_ = json.Unmarshal(v.Query, &obj)
			expr = obj.Query
		}
		if expr == "" {
			expr = v.Definition
		}
		qs = append(qs, Query{Panel: "variable $" + v.Name, RefID: v.Name, Expr: expr, Variable: true})
	}
	var walk func([]json.RawMessage) error
	walk = func(ps []json.RawMessage) error {
		for _, raw := range ps {
			var p panel
			if err := json.Unmarshal(raw, &p); err != nil {
				return fmt.Errorf("reading a panel: %w", err)
			}
			for _, tg := range p.Targets {
				if tg.Expr != "" {
					qs = append(qs, Query{Panel: p.Title, RefID: tg.RefID, Expr: tg.Expr})
				}
			}
			if err := walk(p.Panels); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(d.Panels); err != nil {
		return nil, err
	}
	return qs, nil
}

// variableRef matches Grafana's three ways of writing a variable: $name,
// ${name} (optionally ${name:format}) and [[name]].
var variableRef = regexp.MustCompile(`\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)\]\]`)

// Expand returns q with its variables replaced by their values, as Grafana
// does before it sends a query. A variable without a value is an error.
func (q Query) Expand(values map[string]string) (Query, error) {
	var missing []string
	out := variableRef.ReplaceAllStringFunc(q.Expr, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		v, ok := values[name]
		if !ok {
			missing = append(missing, "$"+name)
			return ref
		}
		return v
	})
	if len(missing) > 0 {
		return q, fmt.Errorf("%s: %s: no value for %s", q, q.Expr, strings.Join(missing, ", "))
	}
	q.Expr = out
	return q, nil
}

// ExpandEach expands q with each set of values and returns the distinct
// queries, in order: a set that changes only variables q does not use adds
// nothing.
func (q Query) ExpandEach(sets ...map[string]string) ([]Query, error) {
	var out []Query
	for _, values := range sets {
		e, err := q.Expand(values)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(out, func(o Query) bool { return o.Expr == e.Expr }) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Variable queries Grafana's Prometheus data source understands.
var (
	labelValuesCall = regexp.MustCompile(`^label_values\(\s*(?:(.*\S)\s*,\s*)?(\w+)\s*\)$`)
	metricsCall     = regexp.MustCompile(`^metrics\((.*)\)$`)
	queryResultCall = regexp.MustCompile(`^query_result\((.*)\)$`)
)

// Count runs an expanded query between start and end and returns how many
// values it gave: the non-NaN points of a panel's range query (one every
// step), or the values of a variable's query.
func Count(ctx context.Context, srv *promtest.Server, q Query, start, end time.Time, step time.Duration) (int, error) {
	expr := strings.TrimSpace(q.Expr)
	if !q.Variable {
		res, err := srv.QueryRange(ctx, expr, start, end, step)
		if err != nil {
			return 0, err
		}
		n := 0
		for _, s := range res.Series {
			for _, p := range s.Points {
				if p.H != nil || !math.IsNaN(p.V) {
					n++
				}
			}
		}
		return n, nil
	}
	if m := labelValuesCall.FindStringSubmatch(expr); m != nil {
		values, err := srv.LabelValues(ctx, m[2], m[1], start, end)
		return len(values), err
	}
	if m := metricsCall.FindStringSubmatch(expr); m != nil {
		re, err := regexp.Compile(m[1])
		if err != nil {
			return 0, fmt.Errorf("%s: %w", expr, err)
		}
		names, err := srv.LabelValues(ctx, "__name__", "", start, end)
		n := 0
		for _, name := range names {
			if re.MatchString(name) {
				n++
			}
		}
		return n, err
	}
	if m := queryResultCall.FindStringSubmatch(expr); m != nil {
		res, err := srv.Query(ctx, m[1], end)
		return len(res.Series), err
	}
	return 0, fmt.Errorf("%s: not a variable query grafanatest knows (label_values, metrics, query_result)", expr)
}
