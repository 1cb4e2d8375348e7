package secrets

import (
	"encoding/json"
	"reflect"
	"testing"
)

// RedactJSON masks a secret in keys and string values, however they are
// escaped, and leaves a number equal to the secret, the literals and the
// shape alone; nothing fetched, or text that is not JSON, is left to
// RedactBytes' rules.
func TestRedactJSON(t *testing.T) {
	s := fetched(t, "a=12\nb=x<\"y\n", "a", "b")
	in := `{"vus":12,"12":["t=12",true,null,"x\u003c\"y","x<\"y"],"n":{"tag":"v12v","e":"\n"}}`
	got := s.RedactJSON([]byte(in))
	var v any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("not JSON: %s: %v", got, err)
	}
	want := map[string]any{
		"vus": 12.0,
		Mask:  []any{"t=" + Mask, true, nil, Mask, Mask},
		"n":   map[string]any{"tag": "v" + Mask + "v", "e": "\n"},
	}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got %s\nwant %v", got, want)
	}
	if got := s.RedactJSON([]byte(`not "12" json`)); string(got) != `not "`+Mask+`" json` {
		t.Errorf("not JSON: %s", got)
	}
	none := fetched(t, "a=12\n")
	if got := none.RedactJSON([]byte(in)); string(got) != in {
		t.Errorf("nothing fetched changed %s", got)
	}
}

// Any JSON text stays JSON of the same shape, with the secret in none of
// its strings and its numbers unchanged.
func FuzzRedactJSON(f *testing.F) {
	for _, seed := range []string{`{"12":12}`, `["a\\12\"","\u0031\u0032",1.12e12]`, `"12"`, `{"k":{"12":[{}]}}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var before any
		if json.Unmarshal([]byte(in), &before) != nil {
			return
		}
		s := fetched(t, "a=12\n", "a")
		var after any
		if err := json.Unmarshal(s.RedactJSON([]byte(in)), &after); err != nil {
			t.Fatalf("%s gave no JSON: %v", in, err)
		}
		if !reflect.DeepEqual(after, masked(before, s)) {
			t.Fatalf("%s: got %v", in, after)
		}
	})
}

// masked is v with every string (and key) redacted.
func masked(v any, s *Store) any {
	switch v := v.(type) {
	case string:
		return s.Redact(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = masked(e, s)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[s.Redact(k)] = masked(e, s)
		}
		return out
	}
	return v
}

// BenchmarkRedactJSON is the cost RedactJSON adds to a result file's
// series line: nothing fetched (every run without secrets), and one
// secret fetched that the line does not hold.
func BenchmarkRedactJSON(b *testing.B) {
	line := []byte(`{"series":{"id":12,"metric":"http_req_duration","tags":{"expected_response":"true","method":"GET",` +
		`"name":"http://127.0.0.1:8080/item/a","proto":"HTTP/1.1","scenario":"default","status":"200","url":"http://127.0.0.1:8080/item/a"}}}`)
	s, err := Parse([]string{"file=" + writeFile(b, "s.txt", "a=s3cr3t-value\n")})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("none-fetched", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.RedactJSON(line)
		}
	})
	_, _ = s.Get(DefaultName, "a")
	b.Run("one-fetched", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.RedactJSON(line)
		}
	})
}
