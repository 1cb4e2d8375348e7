package metrics

import (
	"reflect"
	"testing"
)

// Close closes Done first, then runs what AtClose was given newest first
// and returns only after them; what is given after Close is refused.
func TestInletAtClose(t *testing.T) {
	in := NewInlet(func([]Sample) {})
	var order []string
	for _, name := range []string{"first", "second"} {
		registered := in.AtClose(func() {
			select {
			case <-in.Done():
			default:
				t.Errorf("%s ran before Done was closed", name)
			}
			order = append(order, name)
		})
		if !registered {
			t.Fatalf("AtClose refused %s before Close", name)
		}
	}
	if len(order) != 0 {
		t.Fatalf("ran %v before Close", order)
	}
	in.Close()
	if want := []string{"second", "first"}; !reflect.DeepEqual(order, want) {
		t.Fatalf("Close ran %v, want %v", order, want)
	}
	in.Close()
	if in.AtClose(func() { order = append(order, "late") }) {
		t.Error("AtClose took a function after Close")
	}
	if want := []string{"second", "first"}; !reflect.DeepEqual(order, want) {
		t.Errorf("after a second Close and a late AtClose: %v, want %v", order, want)
	}
}
