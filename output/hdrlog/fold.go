package hdrlog

import "fmt"

// FoldedNames says how many request names came past the first max, whose
// samples are kept together rather than per name: "N request names past
// the first M", "at least N" when counting stopped at the cap of names
// kept for it (atLeast). The log's warning and metronome audit's tables
// say it in the same words.
func FoldedNames(n int, atLeast bool, max int) string {
	count := fmt.Sprint(n)
	if atLeast {
		count = "at least " + count
	}
	return fmt.Sprintf("%s request names past the first %d", count, max)
}
