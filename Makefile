# metronome — build, test, benchmark and demo targets.

GO       ?= go
BIN      := bin/metronome
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS  := -s -w -X github.com/metronome-load/metronome/config.Version=$(VERSION)

.PHONY: all build test test-short test-fresh bench demo dashboard fmt vet clean

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/metronome

# The full suite, with the race detector: what CI runs.
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...

# make test as on a new machine: a fresh clone of HEAD with an empty Go
# module cache (.ci/fresh). Run it before handing a change over.
test-fresh:
	bash .ci/fresh

# Without the race detector, for a quick local loop.
test-short:
	$(GO) test -count=1 -short ./...

# Benchmarks: Go micro-benchmarks, then the end-to-end comparison with the
# peers found (k6 from K6_BINARY or PATH, wrk2 from WRK2_BINARY or PATH,
# Debian's wrk on PATH; see cmd/bench/README.md), which takes about 15 minutes.
# BENCHFLAGS passes flags to the latter, e.g. BENCHFLAGS='-out bench.json'. BenchmarkTrendTenMillion is skipped here:
# each of its iterations adds ten million samples, and the bench program
# measures the same thing once.
BENCHFLAGS ?=
bench: build
	$(GO) test -run '^$$' -bench . -skip TrendTenMillion -benchmem -benchtime 2000x ./metrics/... ./executor/... ./output/...
	K6_BINARY="$(K6_BINARY)" WRK2_BINARY="$(WRK2_BINARY)" $(GO) run ./cmd/bench -metronome $(BIN) $(BENCHFLAGS)

# The newcomer's demo: a server that freezes, measured by a closed loop
# and by an intended-time open model, side by side.
demo: build
	$(BIN) demo

dashboard:
	$(GO) generate ./examples/grafana/...

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

clean:
	rm -rf bin
