package summary

import (
	"strings"
	"testing"
)

// The closed-model account: per scenario the interval (hand-set, or the
// median and range of the VUs' estimates), the samples back-filled, for
// 'auto' the iterations that ran without an estimate, and the raw p99s
// beside the back-filled one; the back-filled note under corrected_latency
// says when samples were estimated. handleSummary gets the same numbers.
func TestBackFillAccount(t *testing.T) {
	f := newFixture()
	f.in.BackFills = []BackFillReport{
		{Name: "loop", Executor: "constant-vus", ExpectedInterval: "auto", Estimated: true,
			Requests: 1172, Backfilled: 586, Unestimated: 10, VUs: 2,
			CadenceMedian: 10.25, CadenceMin: 10.1, CadenceMax: 10.4,
			RawP99: 1.2, IterationP99: 11.4, CorrectedP99: 2712},
		{Name: "paced", Executor: "ramping-vus", ExpectedInterval: "12.5ms",
			Requests: 410, Backfilled: 40, CadenceMedian: 12.5, CadenceMin: 12.5, CadenceMax: 12.5,
			IterationP99: 12.5, CorrectedP99: 456.375},
		{Name: "short", Executor: "per-vu-iterations", ExpectedInterval: "auto", Estimated: true,
			Requests: 3, Unestimated: 3, IterationP99: 5, CorrectedP99: 5},
	}
	text := Text(f.in)
	lineWith(t, text, "      ↳ includes 40 back-filled samples (expectedInterval; 'auto' ones estimated from each VU's cadence), not measured")
	lineWith(t, text, "  █ SCENARIOS (closed model: corrected_latency back-filled, not measured)")
	lineWith(t, text, "    loop (constant-vus, expectedInterval: auto)")
	lineWith(t, text, "      interval.......: estimated per VU: median 10.25ms of 2 VUs (10.1ms – 10.4ms)")
	lineWith(t, text, "      back-filled....: 586 samples (estimates) for 1172 requests; 10 iterations ran before their VU had an estimate and back-filled nothing")
	lineWith(t, text, "      p99............: raw 1.2ms (http_req_duration), 11.4ms (iteration_duration); back-filled 2.71s (corrected_latency)")
	lineWith(t, text, "    paced (ramping-vus, expectedInterval: 12.5ms)")
	lineWith(t, text, "      interval.......: 12.5ms, hand-set")
	lineWith(t, text, "      back-filled....: 40 samples")
	lineWith(t, text, "      p99............: raw 12.5ms (iteration_duration); back-filled 456.38ms (corrected_latency)")
	lineWith(t, text, "      interval.......: no VU ran enough iterations for an estimate")
	if i, j := lineIndex(text, "  █ SCENARIOS (open model"), lineIndex(text, "  █ SCENARIOS (closed model"); i < 0 || j < i || lineIndex(text, "  WARN") < j {
		t.Errorf("want the open-model account, then the closed-model one, then the warnings:\n%s", text)
	}

	fills := Data(f.in)["metronome"].(map[string]any)["backFills"].([]any)
	if len(fills) != 3 {
		t.Fatalf("handleSummary backFills %v", fills)
	}
	loop := fills[0].(map[string]any)
	if loop["name"] != "loop" || loop["estimated"] != true || loop["backfilled"] != int64(586) || loop["unestimated"] != int64(10) ||
		loop["vus"] != int64(2) || loop["cadenceMedian"] != 10.25 || loop["correctedP99"] != 2712.0 || loop["expectedInterval"] != "auto" {
		t.Errorf("handleSummary backFills[0] = %v", loop)
	}

	// Without an 'auto' scenario the note keeps its hand-set wording.
	f.in.BackFills = f.in.BackFills[1:2]
	if text := Text(f.in); !strings.Contains(text, "↳ includes 40 back-filled samples (expectedInterval), not measured") {
		t.Errorf("note without auto scenarios:\n%s", text)
	}
}
