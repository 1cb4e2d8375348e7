package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Std spells every string as encoding/json does; Plain differs only where
// it leaves <, > and & alone and writes \b and \f long, and both decode
// to the same string.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "<a&b>", "\b\f\n\r\t\x00\x1f\x7f", "\u2028\u2029", "\xff\xfe", "ünï€😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Append([]byte("x"), s, Std); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("Std %q: %s, encoding/json %s", s, got[1:], want)
		}
		plain := Append(nil, s, Plain)
		var back, wantBack string
		if err := json.Unmarshal(plain, &back); err != nil {
			t.Fatalf("Plain %q: %s does not decode: %v", s, plain, err)
		}
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Fatalf("Plain %q decodes to %q, Std to %q", s, back, wantBack)
		}
		if bytes.ContainsAny(plain, "\b\f") || bytes.Contains(plain, []byte(`\u003c`)) {
			t.Fatalf("Plain %q: %s", s, plain)
		}
	})
}

// Plain writes control characters other than \n, \r and \t as \u00XX.
func TestPlainControls(t *testing.T) {
	if got := string(Append(nil, "a\bb\fc<d>&", Plain)); got != `"a\u0008b\u000cc<d>&"` {
		t.Errorf("got %s", got)
	}
	if got := string(Append(nil, "a\bb\fc<d>&", Std)); got != `"a\bb\fc\u003cd\u003e\u0026"` {
		t.Errorf("got %s", got)
	}
}
