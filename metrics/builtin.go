package metrics

import (
	"slices"
	"sync"
)

// Names of the built-in metrics. The k6 ones keep k6's names, types and
// units; CorrectedLatency and ScheduleLag are metronome's (docs/DESIGN.md §2.2).
const (
	VUsName               = "vus"
	VUsMaxName            = "vus_max"
	IterationsName        = "iterations"
	IterationDurationName = "iteration_duration"
	DroppedIterationsName = "dropped_iterations"
	ChecksName            = "checks"
	GroupDurationName     = "group_duration"
	DataSentName          = "data_sent"
	DataReceivedName      = "data_received"

	HTTPReqsName              = "http_reqs"
	HTTPReqFailedName         = "http_req_failed"
	HTTPReqDurationName       = "http_req_duration"
	HTTPReqBlockedName        = "http_req_blocked"
	HTTPReqConnectingName     = "http_req_connecting"
	HTTPReqTLSHandshakingName = "http_req_tls_handshaking"
	HTTPReqSendingName        = "http_req_sending"
	HTTPReqWaitingName        = "http_req_waiting"
	HTTPReqReceivingName      = "http_req_receiving"

	CorrectedLatencyName = "corrected_latency"
	ScheduleLagName      = "schedule_lag"

	// The generator's health, one sample per interval of the run
	// (package health, docs/metrics.md).
	GeneratorCPUName          = "generator_cpu"
	GeneratorSchedLatencyName = "generator_sched_latency"
	GeneratorGCPauseName      = "generator_gc_pause"
	GeneratorLateWakeupName   = "generator_late_wakeup"
	GeneratorLateForVUName    = "generator_late_for_vu"
	GeneratorLimitedName      = "generator_limited"

	// CapacitySearchRateName is the rate a capacity-search scenario found
	// (docs/executors.md).
	CapacitySearchRateName = "capacity_search_rate"
)

// RequestDurationNames are the duration metrics of the requests that
// record corrected_latency (docs/DESIGN.md §2.2): k6/http's, gRPC's and
// WebSocket connects', in the order the per-endpoint summary looks for a
// request name's raw figures.
var RequestDurationNames = []string{HTTPReqDurationName, "grpc_req_duration", "ws_connecting"}

// moduleTimeTrendNames are the time trends metronome's own modules define
// besides RequestDurationNames: a WebSocket session's length and its pings.
var moduleTimeTrendNames = []string{"ws_session_duration", "ws_ping"}

// IsBuiltinName reports whether name is a metric metronome itself defines:
// one of RegisterBuiltin's, a request duration of RequestDurationNames or
// another time trend of a built-in module. options.latencyTrends may name
// none of them (docs/metrics.md).
func IsBuiltinName(name string) bool {
	return builtinNames()[name] || slices.Contains(RequestDurationNames, name) || slices.Contains(moduleTimeTrendNames, name)
}

// builtinNames are the names RegisterBuiltin defines.
var builtinNames = sync.OnceValue(func() map[string]bool {
	reg := NewRegistry()
	RegisterBuiltin(reg)
	names := map[string]bool{}
	for _, n := range reg.Names() {
		names[n] = true
	}
	return names
})

// GeneratorPrefix begins the name of every generator health metric.
const GeneratorPrefix = "generator_"

// Builtin holds the built-in metric definitions of one registry, so that hot
// paths never look a metric up by name.
type Builtin struct {
	VUs               *Metric
	VUsMax            *Metric
	Iterations        *Metric
	IterationDuration *Metric
	DroppedIterations *Metric
	Checks            *Metric
	GroupDuration     *Metric
	DataSent          *Metric
	DataReceived      *Metric

	HTTPReqs              *Metric
	HTTPReqFailed         *Metric
	HTTPReqDuration       *Metric
	HTTPReqBlocked        *Metric
	HTTPReqConnecting     *Metric
	HTTPReqTLSHandshaking *Metric
	HTTPReqSending        *Metric
	HTTPReqWaiting        *Metric
	HTTPReqReceiving      *Metric

	CorrectedLatency *Metric
	ScheduleLag      *Metric

	// Per interval: the process's share of its cores (0 to 1), the p99
	// of goroutine scheduling latency, the garbage collector's pauses,
	// the shares of open-model arrivals late although a VU was free and
	// late because none was, and whether the generator may have inflated
	// the interval's latency (1) or not (0).
	GeneratorCPU          *Metric
	GeneratorSchedLatency *Metric
	GeneratorGCPause      *Metric
	GeneratorLateWakeup   *Metric
	GeneratorLateForVU    *Metric
	GeneratorLimited      *Metric

	CapacitySearchRate *Metric
}

// RegisterBuiltin defines every built-in metric in r and returns them.
func RegisterBuiltin(r *Registry) *Builtin {
	return &Builtin{
		VUs:               r.MustNew(VUsName, Gauge, Default),
		VUsMax:            r.MustNew(VUsMaxName, Gauge, Default),
		Iterations:        r.MustNew(IterationsName, Counter, Default),
		IterationDuration: r.MustNew(IterationDurationName, Trend, Time),
		DroppedIterations: r.MustNew(DroppedIterationsName, Counter, Default),
		Checks:            r.MustNew(ChecksName, Rate, Default),
		GroupDuration:     r.MustNew(GroupDurationName, Trend, Time),
		DataSent:          r.MustNew(DataSentName, Counter, Data),
		DataReceived:      r.MustNew(DataReceivedName, Counter, Data),

		HTTPReqs:              r.MustNew(HTTPReqsName, Counter, Default),
		HTTPReqFailed:         r.MustNew(HTTPReqFailedName, Rate, Default),
		HTTPReqDuration:       r.MustNew(HTTPReqDurationName, Trend, Time),
		HTTPReqBlocked:        r.MustNew(HTTPReqBlockedName, Trend, Time),
		HTTPReqConnecting:     r.MustNew(HTTPReqConnectingName, Trend, Time),
		HTTPReqTLSHandshaking: r.MustNew(HTTPReqTLSHandshakingName, Trend, Time),
		HTTPReqSending:        r.MustNew(HTTPReqSendingName, Trend, Time),
		HTTPReqWaiting:        r.MustNew(HTTPReqWaitingName, Trend, Time),
		HTTPReqReceiving:      r.MustNew(HTTPReqReceivingName, Trend, Time),

		CorrectedLatency: r.MustNew(CorrectedLatencyName, Trend, Time),
		ScheduleLag:      r.MustNew(ScheduleLagName, Trend, Time),

		GeneratorCPU:          r.MustNew(GeneratorCPUName, Trend, Default),
		GeneratorSchedLatency: r.MustNew(GeneratorSchedLatencyName, Trend, Time),
		GeneratorGCPause:      r.MustNew(GeneratorGCPauseName, Trend, Time),
		GeneratorLateWakeup:   r.MustNew(GeneratorLateWakeupName, Trend, Default),
		GeneratorLateForVU:    r.MustNew(GeneratorLateForVUName, Trend, Default),
		GeneratorLimited:      r.MustNew(GeneratorLimitedName, Rate, Default),

		CapacitySearchRate: r.MustNew(CapacitySearchRateName, Gauge, Default),
	}
}
