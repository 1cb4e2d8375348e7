// Package lint holds the architecture tests that span the whole module
// rather than one package's imports: the function-length gate
// (TestFunctionLength), which pebble's internal/lint runs the same way, as
// a Go test.
package lint
