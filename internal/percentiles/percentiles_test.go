package percentiles

import "testing"

// Durations print with a unit that keeps 3–4 significant digits, and
// percentiles with k6's names.
func TestFormatMs(t *testing.T) {
	for ms, want := range map[float64]string{
		0: "0s", 0.85: "850µs", 0.0015: "1.5µs", 12.345: "12.35ms", 1: "1ms", 999.99: "999.99ms",
		1923.8: "1.92s", 59_999: "60s", 125_100: "2m5.1s",
		// Past time.Duration's range: hours, never a wrapped negative.
		9e12: "2500000h0m0s", 1e13: "2.778e+06h", 1e300: "2.778e+293h", -1e300: "-2.778e+293h",
	} {
		if got := FormatMs(ms); got != want {
			t.Errorf("FormatMs(%g) = %q, want %q", ms, got, want)
		}
	}
	if got := Name(99.9); got != "p99.9" {
		t.Errorf("Name(99.9) = %q", got)
	}
}
