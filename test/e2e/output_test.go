package e2e

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// jsonLine is one line of the JSON output.
type jsonLine struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		// Metric lines
		Name       string            `json:"name"`
		MetricType string            `json:"type"`
		Contains   string            `json:"contains"`
		Thresholds []json.RawMessage `json:"thresholds"`
		// Point lines
		Time  string            `json:"time"`
		Value *float64          `json:"value"`
		Tags  map[string]string `json:"tags"`
	} `json:"data"`
}

// readJSONOutput parses every line of a JSON output file.
func readJSONOutput(t *testing.T, path string) []jsonLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("JSON output: %v", err)
	}
	defer f.Close()
	var lines []jsonLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var l jsonLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("JSON output line %d is not JSON: %v\n%s", n, err, sc.Bytes())
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("JSON output: %v", err)
	}
	return lines
}

// The JSON and CSV outputs of one run: every line parses, each metric is
// described once before its first point, and the points are the samples
// the server and the script arithmetic say.
func TestOutputsJSONAndCSV(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	dir := t.TempDir()
	jsonPath, csvPath := filepath.Join(dir, "out.json"), filepath.Join(dir, "out.csv")
	r := metronome(t, runSpec{args: []string{"run", "-q", "-e", "TARGET=" + tg.URL,
		"-o", "json=" + jsonPath, "-o", "csv=" + csvPath, script("outputs/load.js")}})
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	served := tg.requests.Load()
	if served != 20 {
		t.Errorf("server answered %d requests, want 20", served)
	}

	lines := readJSONOutput(t, jsonPath)
	described := map[string]jsonLine{}
	points := map[string][]jsonLine{}
	total := 0
	for i, l := range lines {
		switch l.Type {
		case "Metric":
			if _, dup := described[l.Metric]; dup {
				t.Errorf("line %d describes metric %s a second time", i+1, l.Metric)
			}
			if l.Data.Name != l.Metric {
				t.Errorf("line %d: Metric line for %q names %q", i+1, l.Metric, l.Data.Name)
			}
			described[l.Metric] = l
		case "Point":
			if _, ok := described[l.Metric]; !ok {
				t.Errorf("line %d: a point of %s before its Metric line", i+1, l.Metric)
			}
			if l.Data.Value == nil {
				t.Errorf("line %d: point without a value", i+1)
			}
			if _, err := time.Parse(time.RFC3339Nano, l.Data.Time); err != nil {
				t.Errorf("line %d: time %q: %v", i+1, l.Data.Time, err)
			}
			points[l.Metric] = append(points[l.Metric], l)
			total++
		default:
			t.Errorf("line %d has type %q, want Metric or Point", i+1, l.Type)
		}
	}
	for name, kind := range map[string]string{"http_reqs": "counter", "http_req_duration": "trend", "checks": "rate",
		"iterations": "counter", "body_size": "trend", "vus_max": "gauge"} {
		if d, ok := described[name]; !ok || d.Data.MetricType != kind {
			t.Errorf("metric %s described as %q, want %s", name, d.Data.MetricType, kind)
		}
	}
	if th := described["http_req_duration"].Data.Thresholds; len(th) != 1 || string(th[0]) != `"p(95)<5000"` {
		t.Errorf("http_req_duration thresholds in its Metric line = %s, want [\"p(95)<5000\"]", th)
	}
	if n := len(points["http_reqs"]); int64(n) != served {
		t.Errorf("%d http_reqs points, server answered %d", n, served)
	}
	for _, name := range []string{"iterations", "body_size", "checks", "http_req_duration", "iteration_duration"} {
		if n := len(points[name]); n != 20 {
			t.Errorf("%d %s points, want 20", n, name)
		}
	}
	for _, p := range points["http_reqs"] {
		want := map[string]string{"method": "GET", "status": "200", "url": tg.URL, "name": tg.URL,
			"scenario": "s", "kind": "plain", "expected_response": "true", "proto": "HTTP/1.1"}
		for k, v := range want {
			if p.Data.Tags[k] != v {
				t.Errorf("http_reqs point tag %s = %q, want %q (tags %v)", k, p.Data.Tags[k], v, p.Data.Tags)
			}
		}
		if *p.Data.Value != 1 {
			t.Errorf("http_reqs point value %v, want 1", *p.Data.Value)
		}
		break
	}
	for _, p := range points["checks"] {
		if p.Data.Tags["check"] != "status is 200" || *p.Data.Value != 1 {
			t.Errorf("checks point %v = %v, want check=status is 200, 1", p.Data.Tags, *p.Data.Value)
		}
	}

	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatalf("CSV output: %v", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("CSV output does not parse: %v", err)
	}
	if len(rows) == 0 {
		t.Fatal("CSV output is empty")
	}
	wantHeader := "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name," +
		"proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata"
	if h := strings.Join(rows[0], ","); h != wantHeader {
		t.Fatalf("CSV header\n %s\nwant\n %s", h, wantHeader)
	}
	if len(rows)-1 != total {
		t.Errorf("CSV has %d rows, the JSON output of the same run %d points", len(rows)-1, total)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	value := regexp.MustCompile(`^-?[0-9]+\.[0-9]{6}$`)
	httpReqs := 0
	for i, row := range rows[1:] {
		if len(row) != len(rows[0]) {
			t.Fatalf("CSV row %d has %d fields, the header %d", i+2, len(row), len(rows[0]))
		}
		if !value.MatchString(row[col["metric_value"]]) {
			t.Errorf("CSV row %d: metric_value %q is not printed with 6 decimals", i+2, row[col["metric_value"]])
		}
		if _, err := strconv.ParseInt(row[col["timestamp"]], 10, 64); err != nil {
			t.Errorf("CSV row %d: timestamp %q is not unix seconds", i+2, row[col["timestamp"]])
		}
		if row[0] == "http_reqs" {
			httpReqs++
			if row[col["extra_tags"]] != "kind=plain" || row[col["status"]] != "200" || row[col["url"]] != tg.URL {
				t.Errorf("CSV http_reqs row %d: extra_tags %q, status %q, url %q", i+2,
					row[col["extra_tags"]], row[col["status"]], row[col["url"]])
			}
		}
	}
	if int64(httpReqs) != served {
		t.Errorf("%d http_reqs CSV rows, server answered %d", httpReqs, served)
	}
}
