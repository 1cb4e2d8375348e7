// Package compat is metronome's differential suite against k6. Its tests
// run every script of corpus/ through metronome against one loopback
// server and compare what they see — exit code, iteration and request
// counts, checks, metric names, types and tag sets, --summary-export keys
// and the handleSummary data shape — with what real k6 v2.2.0 did on the
// same script, recorded beside it in NNN-name.k6.json; for a script with a
// "// compat:messages" line, also its error and warning lines, and for one
// with a "// compat:console" line its console lines as written, and for one
// with a "// compat:log" line its log lines as written (logfmt or JSON),
// less their time, with request ids as UUID, Date headers as DATE, the
// corpus folder of a stack frame's file URL as file:///CORPUS/ and in
// gRPC's --http-debug lines the times, grpc-go's version and the wire
// length of headers hidden and the metadata lines sorted; a
// "// compat:log source=http-debug" line keeps only the lines holding that
// field (the --http-debug scripts, 480–483). Scripts of
// the dns and localIPs options reach a server of several loopback
// addresses, under names of the suite's own /etc/hosts (names_test.go).
//
// With K6_BINARY set to a k6 binary the tests also re-run k6
// and flag recorded values it no longer reproduces; `go test ./test/compat
// -update-k6` re-records them.
//
// TestJSLib sweeps every version of every library of jslib.k6.io through
// both tools (jslib_test.go): with $JSLIB_DIR pointing at a checkout of
// github.com/grafana/jslib.k6.io it loads each one through a probe script
// of jslib/ and compares the answers with k6's, recorded in
// jslib/k6-answers.json; without it the test is skipped. The package holds
// no code outside its tests.
package compat
