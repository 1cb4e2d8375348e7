package engine

import (
	"context"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/metrics"
)

// contractScript is a fake script that records what the engine hands it
// through its capabilities and what its VUs see of their scenarios.
type contractScript struct {
	*fakeScript
	mu        sync.Mutex
	connected int
	setupData []string
	tagSets   map[*executor.ScenarioTags]int
}

func (s *contractScript) Capabilities() executor.Capabilities {
	c := s.fakeScript.Capabilities()
	c.ConnectRun = func(state *executor.State, abort, fail func(string), progress func(string) float64) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if state != nil && abort != nil && fail != nil && progress != nil {
			s.connected++
		}
	}
	c.SetSetupData = func(data []byte) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.setupData = append(s.setupData, string(data))
	}
	return c
}

func (s *contractScript) NewVU(ctx context.Context, id uint64, rec metrics.Recorder) (executor.VU, error) {
	vu, err := s.fakeScript.NewVU(ctx, id, rec)
	return &contractVU{VU: vu, s: s}, err
}

type contractVU struct {
	executor.VU
	s *contractScript
}

func (v *contractVU) Run(ctx context.Context, it executor.Iteration) executor.Result {
	v.s.mu.Lock()
	v.s.tagSets[it.Scenario.TagSets]++
	v.s.mu.Unlock()
	return v.VU.Run(ctx, it)
}

// TestRunContracts checks that the engine hands the VUs the scenario tag
// set it computed once (the one executor.NewScenarioTags gives for the
// run's options) and uses the run hooks the script's capabilities offer.
func TestRunContracts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &contractScript{fakeScript: &fakeScript{work: 10 * time.Millisecond}, tagSets: map[*executor.ScenarioTags]int{}}
		dir := t.TempDir()
		cfg := Config{
			Script: s, ScriptPath: "fake.js", Quiet: true, NoColor: true, SummaryMode: "compact",
			Options: options(t, `{
				"tags": {"run": "r1"},
				"scenarios": {"main": {"executor": "shared-iterations", "vus": 2, "iterations": 6, "tags": {"kind": "k"}}}
			}`),
			Stdout: io.Discard, Stderr: io.Discard, SummaryExport: dir + "/export.json",
		}
		if err := Run(context.Background(), cfg); err != nil {
			t.Fatalf("run failed: %v", err)
		}
		if len(s.tagSets) != 1 {
			t.Fatalf("the VUs saw %d tag sets for one scenario, want 1: %v", len(s.tagSets), s.tagSets)
		}
		want := metrics.NewTags(map[string]string{"run": "r1", "kind": "k", "scenario": "main", "group": ""})
		for ts, n := range s.tagSets {
			if ts == nil || ts.Iteration != want || n != 6 {
				t.Fatalf("the VUs saw %v in %d iterations, want iteration tags %v in 6", ts, n, want.Map())
			}
			if wantExec := metrics.NewTags(map[string]string{"run": "r1", "scenario": "main"}); ts.Executor != wantExec {
				t.Errorf("executor tags %v, want %v", ts.Executor.Map(), wantExec.Map())
			}
		}
		if s.connected != 1 {
			t.Errorf("ConnectRun called %d times with every hook, want 1", s.connected)
		}
		if len(s.setupData) != 1 || s.setupData[0] != `{"token":"abc"}` {
			t.Errorf("SetSetupData got %q, want setup()'s result once", s.setupData)
		}
	})
}
