package summary

import (
	"strings"
	"testing"
)

// The per-endpoint table lists each name's raw and corrected figures, the
// stalled endpoint first, in aligned columns; names without a raw metric
// show n/a; one endpoint alone gives no table (the headline says it all).
func TestEndpointsTable(t *testing.T) {
	in := &Input{Options: Options{NoColor: true}, Endpoints: []EndpointReport{
		{Name: "home", RawMetric: "http_req_duration", Requests: 900,
			Raw: Percentiles{1.2, 2.5, 3}, Corrected: Percentiles{1.2, 2.6, 3.1}},
		{Name: "login", RawMetric: "http_req_duration", Requests: 100,
			Raw: Percentiles{1.5, 480, 501}, Corrected: Percentiles{40, 612.5, 700}},
		{Name: "grpc.Hello/Say", Corrected: Percentiles{5, 6, 7}},
	}}
	text := Text(in)
	lineWith(t, text, "  █ ENDPOINTS (per name:")
	header := lineWith(t, text, "    name ")
	login := lineWith(t, text, "    login ")
	home := lineWith(t, text, "    home ")
	grpc := lineWith(t, text, "    grpc.Hello/Say ")
	if !(lineIndex(text, "    login ") < lineIndex(text, "    grpc.Hello/Say ") && lineIndex(text, "    grpc.Hello/Say ") < lineIndex(text, "    home ")) {
		t.Errorf("rows are not sorted by corrected p99, slowest first:\n%s", text)
	}
	for _, want := range []string{"100", "1.5ms", "480ms", "501ms", "40ms", "612.5ms", "700ms"} {
		if !strings.Contains(login, " "+want) {
			t.Errorf("login row lacks %s: %q", want, login)
		}
	}
	if !strings.Contains(grpc, "n/a") {
		t.Errorf("a name without raw figures should show n/a: %q", grpc)
	}
	if len(header) != len(login) || len(login) != len(home) {
		t.Errorf("columns are not aligned:\n%s\n%s\n%s", header, login, home)
	}

	in.Endpoints = in.Endpoints[:1]
	if strings.Contains(Text(in), "ENDPOINTS") {
		t.Errorf("a table for a single endpoint")
	}
}

// handleSummary's data holds every endpoint, raw figures only where the
// name has them.
func TestEndpointsData(t *testing.T) {
	in := &Input{Endpoints: []EndpointReport{
		{Name: "login", RawMetric: "http_req_duration", Requests: 3, Raw: Percentiles{1, 2, 3}, Corrected: Percentiles{4, 5, 6}},
		{Name: "ws", Corrected: Percentiles{7, 8, 9}},
	}}
	eps := Data(in)["metronome"].(map[string]any)["endpoints"].([]any)
	if len(eps) != 2 {
		t.Fatalf("endpoints %v", eps)
	}
	login := eps[0].(map[string]any)
	if login["name"] != "login" || login["requests"] != int64(3) || login["rawMetric"] != "http_req_duration" ||
		login["raw"].(map[string]any)["p(99)"] != 2.0 || login["corrected"].(map[string]any)["p(99.9)"] != 6.0 {
		t.Errorf("login %v", login)
	}
	if _, ok := eps[1].(map[string]any)["raw"]; ok {
		t.Errorf("ws has raw figures: %v", eps[1])
	}
}
