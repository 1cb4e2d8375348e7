// Package columns writes rows of text cells as aligned columns: the tables
// of metronome's text reports (the summary's, merge's, compare's, audit's).
package columns

import (
	"strings"
	"unicode/utf8"
)

// Write writes rows to b as columns as wide as their widest cell, two
// spaces apart, each line after indent. align holds one letter per column,
// 'l' to align it left (names) or 'r' right (numbers); its last letter
// stands for the columns past it. A row of one cell is a heading across
// the columns: written as it is and left out of the widths. Lines end
// without blanks.
func Write(b *strings.Builder, indent, align string, rows [][]string) {
	var width []int
	for _, r := range rows {
		if len(r) == 1 {
			continue
		}
		for len(width) < len(r) {
			width = append(width, 0)
		}
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var line strings.Builder
	for _, r := range rows {
		line.Reset()
		line.WriteString(indent)
		if len(r) == 1 {
			line.WriteString(r[0])
			r = nil
		}
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if align[min(i, len(align)-1)] == 'r' {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
}
