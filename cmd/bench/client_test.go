//go:build unix

package main

import (
	"reflect"
	"strings"
	"testing"
)

// testdata/bench-client.txt is go test's output for http1's
// BenchmarkClient, recorded on this project's machine (-count 2).
func TestParseClientBench(t *testing.T) {
	out := readTestdata(t, "bench-client.txt")
	figs, err := parseClientBench([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]clientFigures{
		"http1":    {cpu: []float64{17326, 33582}, allocs: []float64{5, 5}, bytes: []float64{785, 785}},
		"net-http": {cpu: []float64{25674, 41628}, allocs: []float64{37, 37}, bytes: []float64{2458, 2453}},
	}
	for name, w := range want {
		if got := figs[name]; got == nil || !reflect.DeepEqual(*got, w) {
			t.Errorf("%s: %+v, want %+v", name, got, w)
		}
	}
	// Without one of the two clients there is nothing to compare.
	var only []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, "net-http") {
			only = append(only, l)
		}
	}
	if _, err := parseClientBench([]byte(strings.Join(only, "\n"))); err == nil {
		t.Error("output without net-http's figures was accepted")
	}
}
