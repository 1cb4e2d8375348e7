//go:build unix

package main

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// wrkResult is what one wrk or wrk2 run printed on its standard output.
type wrkResult struct {
	// Requests is the count of the "N requests in T" line: every response
	// of the run, wrk2's calibration period included.
	Requests int64
	// Elapsed is that line's duration.
	Elapsed time.Duration
	// RequestsPerSec is the "Requests/sec:" line.
	RequestsPerSec float64
	// Latency maps a percentile (50, 99, 99.9 …) to milliseconds: wrk2's
	// "Recorded Latency" block, measured from each request's intended start
	// (corrected), or Debian wrk's "Latency Distribution", measured from
	// the actual send. Empty without --latency.
	Latency map[float64]float64
	// Uncorrected is wrk2's -U block, from the actual send.
	Uncorrected map[float64]float64
	// SocketErrors sums the connect, read, write and timeout errors.
	SocketErrors int64
	// Non2xx counts responses other than 2xx or 3xx.
	Non2xx int64
}

// parseWrk reads the text wrk or wrk2 prints. It fails when the summary
// line is missing, so that a run that crashed or printed only its usage
// is not taken for a result.
func parseWrk(text string) (*wrkResult, error) {
	res := &wrkResult{Latency: map[float64]float64{}, Uncorrected: map[float64]float64{}}
	var block map[float64]float64 // the latency block being read, if any
	seenSummary := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.Contains(line, "Latency Distribution"):
			block = res.Latency
			if strings.Contains(line, "Uncorrected") {
				block = res.Uncorrected
			}
			continue
		case line == "" || strings.HasPrefix(line, "Detailed Percentile spectrum") || strings.HasPrefix(line, "----"):
			block = nil
			continue
		}
		if block != nil {
			pct, rest, ok := strings.Cut(line, "%")
			if !ok {
				block = nil
			} else {
				p, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
				if err != nil {
					return nil, fmt.Errorf("latency line %q: %v", line, err)
				}
				ms, err := parseWrkTime(strings.TrimSpace(rest))
				if err != nil {
					return nil, fmt.Errorf("latency line %q: %v", line, err)
				}
				block[p] = ms
				continue
			}
		}
		f := strings.Fields(line)
		switch {
		case len(f) >= 4 && f[1] == "requests" && f[2] == "in":
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("summary line %q: %v", line, err)
			}
			ms, err := parseWrkTime(strings.TrimSuffix(f[3], ","))
			if err != nil {
				return nil, fmt.Errorf("summary line %q: %v", line, err)
			}
			res.Requests, res.Elapsed, seenSummary = n, time.Duration(ms*float64(time.Millisecond)), true
		case len(f) == 2 && f[0] == "Requests/sec:":
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return nil, fmt.Errorf("line %q: %v", line, err)
			}
			res.RequestsPerSec = v
		case strings.HasPrefix(line, "Socket errors:"):
			// Socket errors: connect 0, read 0, write 0, timeout 0
			for _, part := range strings.Split(strings.TrimPrefix(line, "Socket errors:"), ",") {
				kv := strings.Fields(part)
				if len(kv) != 2 {
					return nil, fmt.Errorf("line %q: cannot read %q", line, part)
				}
				n, err := strconv.ParseInt(kv[1], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("line %q: %v", line, err)
				}
				res.SocketErrors += n
			}
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "Non-2xx or 3xx responses:")), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %q: %v", line, err)
			}
			res.Non2xx = n
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !seenSummary {
		return nil, fmt.Errorf("no \"N requests in T\" line in the output")
	}
	return res, nil
}

// parseWrkTime converts a wrk duration such as "404.99ms", "1.02s",
// "87.00us" or "1.50m" to milliseconds.
func parseWrkTime(s string) (float64, error) {
	for _, u := range []struct {
		suffix string
		ms     float64
	}{{"us", 1e-3}, {"ms", 1}, {"s", 1e3}, {"m", 60e3}, {"h", 3600e3}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("time %q: %v", s, err)
			}
			return v * u.ms, nil
		}
	}
	return 0, fmt.Errorf("time %q has no unit", s)
}
