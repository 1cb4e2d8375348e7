package output_test

import (
	"strings"
	"testing"

	"github.com/metronome-load/metronome/output"
	_ "github.com/metronome-load/metronome/output/csv"
	_ "github.com/metronome-load/metronome/output/hdrlog"
	_ "github.com/metronome-load/metronome/output/json"
)

// A file output given a URL with credentials (a user hoping it uploads)
// fails to create it, and neither its banner nor its error quotes the
// token.
func TestFileOutputsKeepURLSecrets(t *testing.T) {
	const arg = "https://bob:t0ken-v4lue@results.test/run.out"
	for _, name := range []string{"json", "csv", "hdrlog"} {
		c, ok := output.Lookup(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		o, err := c(output.Params{Arg: arg, Env: map[string]string{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		startErr := o.Start()
		if startErr == nil {
			o.Stop()
			t.Fatalf("%s: created %s", name, arg)
		}
		msgs := o.Description() + "\n" + startErr.Error()
		if strings.Contains(msgs, "t0ken-v4lue") || !strings.Contains(msgs, "https://bob:xxxxx@results.test/run.out") {
			t.Errorf("%s quotes the token or not the redacted URL:\n%s", name, msgs)
		}
	}
}
