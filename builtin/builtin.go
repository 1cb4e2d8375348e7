// Package builtin pulls metronome's built-in extensions into a binary.
// Each of them registers itself from an init function through package
// extension, exactly as a third-party executor, JavaScript module or output
// would; importing this package for its side effects is what makes them
// available:
//
//	import _ "github.com/metronome-load/metronome/builtin"
//
// A custom build adds its own extensions with more blank imports next to
// this one.
package builtin

import (
	// Executors: shared-iterations, per-vu-iterations, constant-vus,
	// ramping-vus, the arrival-rate executors, capacity-search.
	_ "github.com/metronome-load/metronome/executor"
	_ "github.com/metronome-load/metronome/executor/capacity"

	// JavaScript modules: k6, k6/http, k6/metrics, k6/execution, k6/data,
	// k6/encoding, k6/crypto, k6/html, k6/timers, k6/experimental/fs,
	// k6/experimental/csv, k6/experimental/streams, k6/secrets, k6/ws,
	// k6/websockets (also as k6/experimental/websockets), k6/net/grpc,
	// k6/browser; the
	// globals crypto (WebCrypto), TextEncoder and TextDecoder.
	_ "github.com/metronome-load/metronome/internal/js/modules/browser"
	_ "github.com/metronome-load/metronome/internal/js/modules/crypto"
	_ "github.com/metronome-load/metronome/internal/js/modules/csv"
	_ "github.com/metronome-load/metronome/internal/js/modules/data"
	_ "github.com/metronome-load/metronome/internal/js/modules/encoding"
	_ "github.com/metronome-load/metronome/internal/js/modules/execution"
	_ "github.com/metronome-load/metronome/internal/js/modules/fs"
	_ "github.com/metronome-load/metronome/internal/js/modules/grpc"
	_ "github.com/metronome-load/metronome/internal/js/modules/html"
	_ "github.com/metronome-load/metronome/internal/js/modules/secrets"
	_ "github.com/metronome-load/metronome/internal/js/modules/streams"
	_ "github.com/metronome-load/metronome/internal/js/modules/textencoding"
	_ "github.com/metronome-load/metronome/internal/js/modules/timers"
	_ "github.com/metronome-load/metronome/internal/js/modules/webcrypto"
	_ "github.com/metronome-load/metronome/internal/js/modules/websockets"
	_ "github.com/metronome-load/metronome/internal/js/modules/ws"
	_ "github.com/metronome-load/metronome/js/modules/http"
	_ "github.com/metronome-load/metronome/js/modules/k6"
	_ "github.com/metronome-load/metronome/js/modules/metrics"

	// Outputs selected with -o.
	_ "github.com/metronome-load/metronome/internal/output/influxdb"
	_ "github.com/metronome-load/metronome/internal/output/opentelemetry"
	_ "github.com/metronome-load/metronome/output/csv"
	_ "github.com/metronome-load/metronome/output/dashboard"
	_ "github.com/metronome-load/metronome/output/hdrlog"
	_ "github.com/metronome-load/metronome/output/json"
	_ "github.com/metronome-load/metronome/output/prometheus"
	_ "github.com/metronome-load/metronome/output/result"
)
