package metrics

// The names of k6's built-in metrics.
const (
	VUsName               = "vus"
	VUsMaxName            = "vus_max"
	IterationsName        = "iterations"
	IterationDurationName = "iteration_duration"
	DroppedIterationsName = "dropped_iterations"

	ChecksName        = "checks"
	GroupDurationName = "group_duration"

	HTTPReqsName              = "http_reqs"
	HTTPReqFailedName         = "http_req_failed"
	HTTPReqDurationName       = "http_req_duration"
	HTTPReqBlockedName        = "http_req_blocked"
	HTTPReqConnectingName     = "http_req_connecting"
	HTTPReqTLSHandshakingName = "http_req_tls_handshaking"
	HTTPReqSendingName        = "http_req_sending"
	HTTPReqWaitingName        = "http_req_waiting"
	HTTPReqReceivingName      = "http_req_receiving"

	WSSessionsName         = "ws_sessions"
	WSMessagesSentName     = "ws_msgs_sent"
	WSMessagesReceivedName = "ws_msgs_received"
	WSPingName             = "ws_ping"
	WSSessionDurationName  = "ws_session_duration"
	WSConnectingName       = "ws_connecting"

	GRPCReqDurationName = "grpc_req_duration"

	DataSentName     = "data_sent"
	DataReceivedName = "data_received"
)

// BuiltinMetrics are k6's built-in metrics of a registry.
type BuiltinMetrics struct {
	VUs               *Metric
	VUsMax            *Metric
	Iterations        *Metric
	IterationDuration *Metric
	DroppedIterations *Metric

	Checks        *Metric
	GroupDuration *Metric

	HTTPReqs              *Metric
	HTTPReqFailed         *Metric
	HTTPReqDuration       *Metric
	HTTPReqBlocked        *Metric
	HTTPReqConnecting     *Metric
	HTTPReqTLSHandshaking *Metric
	HTTPReqSending        *Metric
	HTTPReqWaiting        *Metric
	HTTPReqReceiving      *Metric

	WSSessions         *Metric
	WSMessagesSent     *Metric
	WSMessagesReceived *Metric
	WSPing             *Metric
	WSSessionDuration  *Metric
	WSConnecting       *Metric

	GRPCReqDuration *Metric

	DataSent     *Metric
	DataReceived *Metric
}

// RegisterBuiltinMetrics defines k6's built-in metrics in registry (those
// metronome defined already are returned as they are) and returns them.
func RegisterBuiltinMetrics(registry *Registry) *BuiltinMetrics {
	r := registry
	return &BuiltinMetrics{
		VUs:               r.MustNewMetric(VUsName, Gauge),
		VUsMax:            r.MustNewMetric(VUsMaxName, Gauge),
		Iterations:        r.MustNewMetric(IterationsName, Counter),
		IterationDuration: r.MustNewMetric(IterationDurationName, Trend, Time),
		DroppedIterations: r.MustNewMetric(DroppedIterationsName, Counter),

		Checks:        r.MustNewMetric(ChecksName, Rate),
		GroupDuration: r.MustNewMetric(GroupDurationName, Trend, Time),

		HTTPReqs:              r.MustNewMetric(HTTPReqsName, Counter),
		HTTPReqFailed:         r.MustNewMetric(HTTPReqFailedName, Rate),
		HTTPReqDuration:       r.MustNewMetric(HTTPReqDurationName, Trend, Time),
		HTTPReqBlocked:        r.MustNewMetric(HTTPReqBlockedName, Trend, Time),
		HTTPReqConnecting:     r.MustNewMetric(HTTPReqConnectingName, Trend, Time),
		HTTPReqTLSHandshaking: r.MustNewMetric(HTTPReqTLSHandshakingName, Trend, Time),
		HTTPReqSending:        r.MustNewMetric(HTTPReqSendingName, Trend, Time),
		HTTPReqWaiting:        r.MustNewMetric(HTTPReqWaitingName, Trend, Time),
		HTTPReqReceiving:      r.MustNewMetric(HTTPReqReceivingName, Trend, Time),

		WSSessions:         r.MustNewMetric(WSSessionsName, Counter),
		WSMessagesSent:     r.MustNewMetric(WSMessagesSentName, Counter),
		WSMessagesReceived: r.MustNewMetric(WSMessagesReceivedName, Counter),
		WSPing:             r.MustNewMetric(WSPingName, Trend, Time),
		WSSessionDuration:  r.MustNewMetric(WSSessionDurationName, Trend, Time),
		WSConnecting:       r.MustNewMetric(WSConnectingName, Trend, Time),

		GRPCReqDuration: r.MustNewMetric(GRPCReqDurationName, Trend, Time),

		DataSent:     r.MustNewMetric(DataSentName, Counter, Data),
		DataReceived: r.MustNewMetric(DataReceivedName, Counter, Data),
	}
}
