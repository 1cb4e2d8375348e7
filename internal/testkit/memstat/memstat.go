// Package memstat measures this process's memory, for the tests and
// benchmarks that bound it: the live heap and the resident set.
package memstat

import (
	"bufio"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// LiveHeap is the heap in use right after a collection: what the program
// still holds, without the garbage a collection would free.
func LiveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// RSS is this process's resident set in bytes, from /proc/self/status
// (Linux only).
func RSS() (int64, error) { return Status(0, "VmRSS") }

// Status returns a size field of /proc/PID/status ("VmRSS", "RssAnon",
// "VmHWM" …) in bytes, for process pid, or for this process when pid is 0
// (Linux only).
func Status(pid int, field string) (int64, error) {
	path := "/proc/self/status"
	if pid != 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/status"
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New(path + " has no " + field + " line")
}
