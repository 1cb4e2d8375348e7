// Package k6 is the root of k6's extension API as metronome implements it:
// the packages below declare the names, signatures and behaviour xk6
// extensions rely on, written for metronome and adapted onto its public
// kit. No code of k6 is in them. metronome build writes this module to a
// temporary folder and points go.k6.io/k6/v2 at it with a replace line;
// it is never published.
package k6
