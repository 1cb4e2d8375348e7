package summary

import (
	"testing"

	"github.com/metronome-load/metronome/metrics"
)

func TestGroupTree(t *testing.T) {
	root := GroupTree([]string{"::a", "::a::b"}, []metrics.CheckTally{
		{Group: "", Name: "top", Passes: 1}, {Group: "::a::b", Name: "deep", Fails: 2},
	})
	if len(root.Checks) != 1 || root.Checks[0].Name != "top" {
		t.Fatalf("root checks: %+v", root.Checks)
	}
	if len(root.Groups) != 1 || root.Groups[0].Name != "a" || len(root.Groups[0].Groups) != 1 {
		t.Fatalf("groups: %+v", root.Groups)
	}
	b := root.Groups[0].Groups[0]
	if b.Name != "b" || b.Path != "::a::b" || len(b.Checks) != 1 || b.Checks[0].Fails != 2 {
		t.Fatalf("nested group: %+v", b)
	}
}
