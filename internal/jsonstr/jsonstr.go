// Package jsonstr appends Go strings as JSON string literals without
// encoding/json's reflection, for the outputs that write a line per sample
// or series. Each Flavor spells a string exactly as one encoder does, so
// that the files match that encoder's byte for byte.
package jsonstr

import "unicode/utf8"

// Flavor is the encoder whose spelling Append copies.
type Flavor uint8

const (
	// Std is encoding/json's: <, > and & escaped for HTML, and \b and \f
	// in their short forms.
	Std Flavor = iota
	// Plain escapes only what JSON requires: quotes, backslashes and
	// control characters, \n, \r and \t short and the others as \u00XX,
	// as k6's JSON output writes them.
	Plain
)

// safe says, per flavor, which ASCII bytes are copied as they are.
var safe = func() (t [2][utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[Plain][c] = c != '"' && c != '\\'
		t[Std][c] = t[Plain][c] && c != '<' && c != '>' && c != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// Append appends s to b as a quoted JSON string in flavor f. Invalid UTF-8
// becomes U+FFFD, and U+2028 and U+2029 are escaped so that the line is
// also valid JavaScript, in both flavors.
func Append(b []byte, s string, f Flavor) []byte {
	ok := &safe[f]
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if ok[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch {
			case c == '\\' || c == '"':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b' && f == Std:
				b = append(b, '\\', 'b')
			case c == '\f' && f == Std:
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
