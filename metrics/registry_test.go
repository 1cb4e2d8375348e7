package metrics

import "testing"

// NewAll keeps each metric where its Def says, and stops at a conflict.
func TestNewAll(t *testing.T) {
	r := NewRegistry()
	var a, b *Metric
	if err := r.NewAll(Def{To: &a, Name: "all_a", Type: Counter}, Def{To: &b, Name: "all_b", Type: Trend, Contains: Time}); err != nil {
		t.Fatal(err)
	}
	if a != r.Get("all_a") || b != r.Get("all_b") || b.Contains != Time {
		t.Fatalf("a %v, b %v", a, b)
	}
	var c *Metric
	if err := r.NewAll(Def{To: &c, Name: "all_a", Type: Trend}); err == nil || c != nil {
		t.Errorf("a Trend named as a Counter: %v, %v", err, c)
	}
}
