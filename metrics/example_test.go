package metrics_test

import (
	"fmt"

	"github.com/metronome-load/metronome/metrics"
)

// A trend of the response times 1, 2, … 100 ms. Count, min, max and the
// mean are exact; percentiles use k6's estimator (h = p/100·(n−1)) on the
// histogram's buckets (each value read as its bucket's middle), within
// 0.05% of the exact 50.5, 90.1 and 99.01.
func ExampleTrendSink() {
	t := metrics.NewTrendSink()
	for v := 1; v <= 100; v++ {
		t.AddValue(float64(v))
	}
	fmt.Printf("count=%d min=%g max=%g avg=%g\n", t.Count(), t.Min(), t.Max(), t.Avg())
	for _, p := range []float64{50, 90, 99} {
		fmt.Printf("p(%g)=%.2f\n", p, t.Percentile(p))
	}
	// Output:
	// count=100 min=1 max=100 avg=50.5
	// p(50)=50.50
	// p(90)=90.11
	// p(99)=98.99
}
