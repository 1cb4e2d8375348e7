package prometheus

import (
	"strings"
	"testing"
	"time"
)

func TestParseConfigDefaults(t *testing.T) {
	c, err := ParseConfig(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.ServerURL != "http://localhost:9090/api/v1/write" || c.PushInterval != 5*time.Second ||
		len(c.TrendStats) != 1 || c.TrendStats[0] != "p(99)" || c.TrendAsNativeHistogram || c.StaleMarkers || c.NativeHistogramSchema != 3 {
		t.Errorf("defaults %+v", c)
	}
}

func TestParseConfigEnv(t *testing.T) {
	env := map[string]string{
		"K6_PROMETHEUS_RW_SERVER_URL":                "https://prom.example:9443/api/v1/write",
		"K6_PROMETHEUS_RW_PUSH_INTERVAL":             "250ms",
		"K6_PROMETHEUS_RW_TREND_STATS":               "p(95), p(99.9),min,max,avg,med,count,sum",
		"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM": "true",
		"K6_PROMETHEUS_RW_HTTP_HEADERS":              "X-One: 1,X-Two:2",
		"K6_PROMETHEUS_RW_HEADERS_X-Two":             "two",
		"K6_PROMETHEUS_RW_USERNAME":                  "u",
		"K6_PROMETHEUS_RW_PASSWORD":                  "p",
		"K6_PROMETHEUS_RW_INSECURE_SKIP_TLS_VERIFY":  "1",
		"K6_PROMETHEUS_RW_STALE_MARKERS":             "true",
		"K6_PROMETHEUS_RW_NATIVE_HISTOGRAM_SCHEMA":   "8",
	}
	c, err := ParseConfig(env, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.ServerURL != env["K6_PROMETHEUS_RW_SERVER_URL"] || c.PushInterval != 250*time.Millisecond {
		t.Errorf("url/interval %+v", c)
	}
	if got := strings.Join(c.TrendStats, "|"); got != "p(95)|p(99.9)|min|max|avg|med|count|sum" {
		t.Errorf("trend stats %q", got)
	}
	if !c.TrendAsNativeHistogram || !c.InsecureSkipTLSVerify || !c.StaleMarkers || c.NativeHistogramSchema != 8 {
		t.Errorf("booleans %+v", c)
	}
	if c.Headers["X-One"] != "1" || c.Headers["X-Two"] != "two" || len(c.Headers) != 2 {
		t.Errorf("headers %v", c.Headers)
	}
	if c.Username != "u" || c.Password != "p" {
		t.Errorf("basic auth %+v", c)
	}
	c, err = ParseConfig(env, "http://other:1/write")
	if err != nil || c.ServerURL != "http://other:1/write" {
		t.Errorf("-o argument did not set the URL: %v %q", err, c.ServerURL)
	}
}

func TestParseConfigErrorsNameTheVariable(t *testing.T) {
	for name, val := range map[string]string{
		"K6_PROMETHEUS_RW_SERVER_URL":                "localhost:9090",
		"K6_PROMETHEUS_RW_PUSH_INTERVAL":             "soon",
		"K6_PROMETHEUS_RW_TREND_STATS":               "p(99),p95",
		"K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM": "yes please",
		"K6_PROMETHEUS_RW_STALE_MARKERS":             "maybe",
		"K6_PROMETHEUS_RW_HTTP_HEADERS":              "novalue",
		"K6_PROMETHEUS_RW_NATIVE_HISTOGRAM_SCHEMA":   "9",
	} {
		_, err := ParseConfig(map[string]string{name: val}, "")
		if err == nil {
			t.Errorf("%s=%q accepted", name, val)
			continue
		}
		if !strings.HasPrefix(err.Error(), name+":") {
			t.Errorf("%s=%q: error %q does not name the variable", name, val, err)
		}
	}
	_, err := ParseConfig(map[string]string{"K6_PROMETHEUS_RW_TREND_STATS": "p(101)"}, "")
	if err == nil {
		t.Error("p(101) accepted")
	}
}

func TestTrendStatNames(t *testing.T) {
	for in, want := range map[string]string{
		"p(99)": "p99", "p(99.9)": "p999", "p(0.95)": "p095", "p(50)": "p50",
		"avg": "avg", "med": "med", "min": "min", "max": "max", "count": "count", "sum": "sum",
	} {
		st, err := parseTrendStat(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if st.suffix != want {
			t.Errorf("%s → %s, want %s", in, st.suffix, want)
		}
	}
	if st, _ := parseTrendStat("p(99.9)"); st.kind != "p" || st.pct != 99.9 {
		t.Errorf("p(99.9) parsed as %+v", st)
	}
}
