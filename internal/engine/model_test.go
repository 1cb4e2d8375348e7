package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/executor/schedule"
	"github.com/metronome-load/metronome/executor/segment"
)

// steady is an extension's open-model timetable: one arrival every 10ms.
type steady struct{}

func (steady) Offset(i int64) (time.Duration, bool) {
	return time.Duration(i) * 10 * time.Millisecond, i >= 0 && i < 100
}
func (s steady) Walk() schedule.Walker { return s }
func (steady) Duration() time.Duration { return time.Second }
func (steady) Count() int64            { return 100 }

type openExt struct{ executor.ArrivalConfig }

func (*openExt) Description() string { return "open extension" }
func (*openExt) Segmented(*segment.Tuple) (executor.Config, error) {
	return nil, executor.ErrNoSegments
}

// handOpen is an open-model config written without the kit: nothing but
// its declaration says it is open.
type handOpen struct{ executor.Config }

func (handOpen) Model() executor.Model { return executor.ModelOpen }

// The summary and VU planning follow each config's declared model, also
// for an extension's open-model config, which has no rate Schedule.
func TestDeclaredModel(t *testing.T) {
	sc := &executor.Scenario{Name: "ext", Executor: "ext", Exec: "default"}
	ac, err := executor.NewArrivalConfig(sc, steady{}, 2, 5, executor.Drop)
	if err != nil {
		t.Fatal(err)
	}
	open := &openExt{ac}
	closed := &executor.ConstantVUsConfig{Scenario: &executor.Scenario{Name: "loop", Exec: "default"}, VUs: 3, Duration: time.Second}
	if !isOpenModel(open) || isOpenModel(closed) {
		t.Errorf("isOpenModel: extension %v, constant-vus %v", isOpenModel(open), isOpenModel(closed))
	}
	if plannedOf(open) != 2 || plannedOf(closed) != 3 {
		t.Errorf("planned VUs: extension %d (want preAllocatedVUs 2), constant-vus %d", plannedOf(open), plannedOf(closed))
	}
	if hand := (handOpen{closed}); !isOpenModel(hand) || plannedOf(hand) != 3 {
		t.Errorf("a hand-written open config: open %v, planned %d", isOpenModel(hand), plannedOf(hand))
	}
	if executor.Ask(open, nil).Queues() {
		t.Error("a Drop config reported as queueing")
	}
	subs := summarySubmetrics([]executor.Config{open, closed}, nil)
	if !slices.Contains(subs, "corrected_latency{scenario:ext}") || slices.Contains(subs, "iteration_duration{scenario:ext}") ||
		!slices.Contains(subs, "iteration_duration{scenario:loop}") {
		t.Errorf("summary submetrics %q", subs)
	}
}
