package dashboard

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/metrics"
	"github.com/metronome-load/metronome/output"
	"github.com/metronome-load/metronome/secrets"
	"github.com/metronome-load/metronome/summary"
)

// fetchedSecret is a Store that has handed out secret, as k6/secrets does.
func fetchedSecret(t *testing.T, secret string) *secrets.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secrets.txt")
	if err := os.WriteFile(path, []byte("k="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := secrets.Parse([]string{"file=" + path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(secrets.DefaultName, "k"); err != nil {
		t.Fatal(err)
	}
	return s
}

// A fetched secret in a request's name and in a scenario's name is hidden
// in the live page, in /api/content and in the report, in whatever way
// the page escapes it: none of them holds even its first characters
// ("Zq9"), while the mask shows where it was.
func TestSecretsHiddenInPageAndAPI(t *testing.T) {
	const secret = `Zq9+x/y=&<w>'q"`
	export := filepath.Join(t.TempDir(), "report.html")
	o, err := New(output.Params{Secrets: fetchedSecret(t, secret), Now: func() time.Time { return t0 },
		Env: map[string]string{EnvPort: "-1", EnvPeriod: "1s", EnvExport: export}})
	if err != nil {
		t.Fatal(err)
	}
	d := o.(*Output)
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	reg := metrics.NewRegistry()
	b := metrics.RegisterBuiltin(reg)
	tags := metrics.NewTags(map[string]string{"scenario": "sc_Zq9", "name": "http://127.0.0.1/?token=" + secret})
	var batch []metrics.Sample
	for i := range 20 {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		batch = append(batch,
			metrics.Sample{Metric: b.HTTPReqs, Tags: tags, Time: at, Value: 1},
			metrics.Sample{Metric: b.HTTPReqDuration, Tags: tags, Time: at, Value: 10},
			metrics.Sample{Metric: b.CorrectedLatency, Tags: tags, Time: at, Value: 12})
	}
	d.AddSamples(batch)
	d.ReceiveSummary(&summary.Input{})
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	// sc_Zq9 is no secret; the secret's own text is "Zq9+...".
	hidden := func(where, s string) {
		t.Helper()
		if strings.Contains(strings.ReplaceAll(s, "sc_Zq9", ""), "Zq9") || !strings.Contains(s, secrets.Mask) {
			t.Errorf("%s shows the secret or not the mask:\n%s", where, s)
		}
	}
	page, content := httptest.NewRecorder(), httptest.NewRecorder()
	d.servePage(page, httptest.NewRequest("GET", "/", nil))
	d.serveContent(content, httptest.NewRequest("GET", "/api/content", nil))
	hidden("the live page", page.Body.String())
	hidden("/api/content", content.Body.String())
	report, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	hidden("the report", string(report))
}
