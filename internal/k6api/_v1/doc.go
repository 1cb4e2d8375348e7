// Package k6 is the root of k6's extension API at the import path of k6
// v0.x and v1.x, as metronome implements it: the packages below are the
// v2 path's packages under their old import paths, the same types (so
// extensions of both paths mix in one binary). metronome build writes
// this module out and points go.k6.io/k6 at it; it is never published.
package k6
