package secrets

import "encoding/json"

// RedactJSON returns the JSON text b with every secret fetched so far
// replaced by Mask inside its strings (object keys included), and its
// numbers, literals and structure left as they are: a file another
// program reads back (a result file's options, an API answer) stays JSON
// of the same shape even when a secret is a short number that RedactBytes
// would replace in a value. b is returned as is while nothing has been
// fetched; text that is not JSON is redacted as RedactBytes does.
func (s *Store) RedactJSON(b []byte) []byte {
	r := s.replacer()
	if r == nil {
		return b
	}
	if text := string(b); r.Replace(text) == text {
		return b // most lines hold no secret: one pass over them
	}
	if !json.Valid(b) {
		return s.RedactBytes(b)
	}
	var out []byte
	last := 0
	for start := 0; start < len(b); start++ {
		if b[start] != '"' {
			continue
		}
		// b is valid JSON, so a quote outside a string opens one, and the
		// string ends at the next quote no backslash escapes.
		end, escaped := start+1, false
		for b[end] != '"' {
			if b[end] == '\\' {
				escaped = true
				end++
			}
			end++
		}
		var v string
		if escaped {
			_ = json.Unmarshal(b[start:end+1], &v)
		} else {
			v = string(b[start+1 : end]) // a string without escapes is its text
		}
		if red := r.Replace(v); red != v {
			enc, _ := json.Marshal(red)
			out = append(append(out, b[last:start]...), enc...)
			last = end + 1
		}
		start = end
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
