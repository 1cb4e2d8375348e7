package schedule_test

import (
	"fmt"
	"time"

	"github.com/metronome-load/metronome/executor/schedule"
)

// Three arrivals per second for two seconds: six arrivals, each due at
// ⌊i·1s/3⌋ from the scenario's start, with no drift however long the
// run.
func ExampleConstant() {
	s, err := schedule.Constant{Rate: 3, TimeUnit: time.Second, Duration: 2 * time.Second}.Schedule()
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Count(), "arrivals")
	for i := range s.Count() + 1 {
		at, ok := s.Offset(i)
		fmt.Println(i, at, ok)
	}
	// Output:
	// 6 arrivals
	// 0 0s true
	// 1 333.333333ms true
	// 2 666.666666ms true
	// 3 1s true
	// 4 1.333333333s true
	// 5 1.666666666s true
	// 6 0s false
}
