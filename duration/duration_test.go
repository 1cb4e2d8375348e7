package duration

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	good := []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"1500", 1500 * time.Millisecond},
		{"0.5", 500 * time.Microsecond},
		{"-250", -250 * time.Millisecond},
		{" 30s ", 30 * time.Second},
		{"250ms", 250 * time.Millisecond},
		{"1m30s", 90 * time.Second},
		{"1h2m3.5s", time.Hour + 2*time.Minute + 3500*time.Millisecond},
		{"1d", 24 * time.Hour},
		{"2d12h", 60 * time.Hour},
		{"1d0s", 24 * time.Hour},
		{"-1d2h", -26 * time.Hour},
		{"+5s", 5 * time.Second},
		{"-5s", -5 * time.Second},
		{"10us", 10 * time.Microsecond},
		{"10µs", 10 * time.Microsecond},
		{"7ns", 7},
	}
	for _, c := range good {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	bad := []string{"", " ", "abc", "10 years", "s", "d", "1.5d", "-d", "+", "-", "1d-5s", "5x", "NaN", "Inf", "-Inf",
		"1e300", "106752d", "99999999999d", "1d1d", "1 s", "d5s"}
	for _, in := range bad {
		if d, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %s, want an error", in, d)
		}
	}
}

func TestFromMillis(t *testing.T) {
	if d, err := FromMillis(1.5); err != nil || d != 1500*time.Microsecond {
		t.Errorf("FromMillis(1.5) = %s, %v", d, err)
	}
	for _, ms := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e16, -1e16} {
		if _, err := FromMillis(ms); err == nil {
			t.Errorf("FromMillis(%v) accepted", ms)
		}
	}
}

func TestJSON(t *testing.T) {
	for in, want := range map[string]time.Duration{
		`"30s"`: 30 * time.Second, `1500`: 1500 * time.Millisecond, `"1500"`: 1500 * time.Millisecond,
		`"1d"`: 24 * time.Hour, `0.25`: 250 * time.Microsecond,
	} {
		var d Duration
		if err := json.Unmarshal([]byte(in), &d); err != nil {
			t.Errorf("unmarshal %s: %v", in, err)
			continue
		}
		if d.Std() != want {
			t.Errorf("unmarshal %s = %s, want %s", in, d, want)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var back Duration
		if err := json.Unmarshal(b, &back); err != nil || back != d {
			t.Errorf("round trip of %s via %s = %s, %v", in, b, back, err)
		}
	}
	for _, in := range []string{`true`, `null`, `{}`, `[]`, `"x"`, `1e400`} {
		var d Duration
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("unmarshal %s accepted: %s", in, d)
		}
	}
}

func TestParseValue(t *testing.T) {
	for _, v := range []any{"2s", 2000.0, float32(2000), 2000, int64(2000), json.Number("2000")} {
		if d, err := ParseValue(v); err != nil || d != 2*time.Second {
			t.Errorf("ParseValue(%#v) = %s, %v", v, d, err)
		}
	}
	for _, v := range []any{nil, true, json.Number("x"), []any{}} {
		if _, err := ParseValue(v); err == nil {
			t.Errorf("ParseValue(%#v) accepted", v)
		}
	}
}

// FuzzParseDuration checks that Parse never panics and that what it
// accepts survives a round trip through the Go duration string and JSON.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"0", "1500", "30s", "1m30s", "1d2h", "-1d", "+1h", "1e3", "0x1p3", "9223372036854ms",
		"106751d23h47m16.854775807s", "-106751d", ".5", "1d-1s", "\x00", "٣s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err != nil {
			return
		}
		back, err := Parse(d.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %s, but Parse(%q) fails: %v", s, d, d.String(), err)
		}
		if back != d {
			t.Fatalf("Parse(%q) = %d, round trip gives %d", s, d, back)
		}
		b, err := json.Marshal(Duration(d))
		if err != nil {
			t.Fatal(err)
		}
		var j Duration
		if err := json.Unmarshal(b, &j); err != nil || j.Std() != d {
			t.Fatalf("JSON round trip of %s via %s = %s, %v", d, b, j, err)
		}
	})
}
