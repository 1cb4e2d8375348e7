package columns

import (
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	rows := [][]string{
		{"name", "", "count", "interval"},
		{"scenario µs"},
		{"a", "k6", "12345", "[1, 2]"},
		{"bbbb", "audit", "7", "[10, 20]"},
	}
	var b strings.Builder
	Write(&b, "  ", "llrl", rows)
	want := "" +
		"  name         count  interval\n" +
		"  scenario µs\n" +
		"  a     k6     12345  [1, 2]\n" +
		"  bbbb  audit      7  [10, 20]\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	// The last letter stands for the columns past it.
	b.Reset()
	Write(&b, "", "lr", [][]string{{"x", "1", "22"}, {"yy", "333", "4"}})
	if want := "x     1  22\nyy  333   4\n"; b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
