package output

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`push to https://bob:hunter2@prom.example/api/v1/write failed`, `push to https://bob:xxxxx@prom.example/api/v1/write failed`},
		{`"http://:tok@h/x" is not an http(s) URL`, `"http://:xxxxx@h/x" is not an http(s) URL`},
		{`cannot create https://u:p4ss@host/r.json: no such file or directory`, `cannot create https://u:xxxxx@host/r.json: no such file or directory`},
		{`server said: Authorization: Bearer abc.def-123 rejected`, `server said: Authorization: xxxxx rejected`},
		{`{"authorization":"Basic dTpw"}`, `{"authorization":"xxxxx"}`},
		{`token Bearer s3cr3t+/= expired`, `token Bearer xxxxx expired`},
		{`http://host/path?q=1 and user@example.com stay`, `http://host/path?q=1 and user@example.com stay`},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
	if got := Redact("401: bad credentials for tenant-key-42", "tenant-key-42", ""); strings.Contains(got, "tenant-key-42") {
		t.Errorf("a listed secret survived: %q", got)
	}
}
