package js

import "testing"

func TestPairs(t *testing.T) {
	var p pairs[string, int]
	if _, ok := p.get("a"); ok {
		t.Fatal("empty pairs found a")
	}
	p.set("a", 1)
	p.set("b", 2)
	p.set("a", 3)
	p.set("c", 4)
	p.delete("b")
	p.delete("x")
	want := map[string]int{"a": 3, "c": 4}
	if len(p) != len(want) {
		t.Fatalf("%d entries, want %d: %v", len(p), len(want), p)
	}
	for k, v := range want {
		if got, ok := p.get(k); !ok || got != v {
			t.Errorf("get(%q) = %d, %v; want %d", k, got, ok, v)
		}
	}
	if _, ok := p.get("b"); ok {
		t.Error("b is still there after delete")
	}
}

// A deleted entry's slot is cleared: the value it held is not kept alive
// past the slice's length.
func TestPairsDeleteLetsGo(t *testing.T) {
	var p pairs[string, *int]
	one, two := 1, 2
	p.set("a", &one)
	p.set("b", &two)
	p.delete("a")
	if spare := p[:cap(p)][len(p)]; spare.val != nil {
		t.Errorf("the freed slot still holds %v", *spare.val)
	}
}
