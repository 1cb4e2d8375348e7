package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
)

// vuMemory is a lower bound of the memory one VU takes, so that a VU count
// above availableMemory/vuMemory cannot run here whatever the script. An
// idle VU of the smallest script holds about 7 KB of heap and an 8 KB
// goroutine stack (docs/performance.md); measured as resident-set growth
// per extra VU of `metronome run`, 1,000 VUs looping sleep(1) take about
// 25 KB each and VUs looping http.get + check + sleep 50-74 KB each.
// Scripts that hold data take more: passing the check does not promise
// that a run fits.
const vuMemory = 16 << 10

// availableMemory returns the bytes of memory the process may still use:
// the kernel's MemAvailable, lowered to the room left under a cgroup
// memory limit; 0 when it cannot be read (not Linux).
var availableMemory = func() int64 {
	avail := meminfoAvailable()
	for _, f := range [][2]string{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},                                 // cgroup v2
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}, // v1
	} {
		limit, err1 := readInt(f[0])
		used, err2 := readInt(f[1])
		if err1 != nil || err2 != nil || limit <= 0 || limit >= 1<<60 {
			continue
		}
		room := max(limit-used, 0)
		if avail == 0 || room < avail {
			avail = room
		}
	}
	return avail
}

// meminfoAvailable is MemAvailable of /proc/meminfo in bytes, 0 if unknown.
func meminfoAvailable() int64 {
	raw, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

func readInt(path string) (int64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
}

// vuLimit is the most VUs this machine's memory can hold.
func vuLimit() config.VULimit {
	avail := availableMemory()
	if avail <= 0 {
		return config.VULimit{}
	}
	n := avail / vuMemory
	size := fmt.Sprintf("%.1f GiB", float64(avail)/(1<<30))
	if avail < 1<<30 {
		size = fmt.Sprintf("%.1f MiB", float64(avail)/(1<<20))
	}
	return config.VULimit{Max: n, Why: fmt.Sprintf("the %d that fit in the %s of memory available on this machine "+
		"at %d KiB each, the least a VU needs", n, size, vuMemory>>10)}
}

// checkLimits refuses scenarios this machine cannot run (config.CheckLimits),
// scenarios that together need more VUs at once than it can hold, and a
// scenario that would end past the longest time.Duration (some 292 years
// after the start), whose end would otherwise wrap around to before the
// test began.
func checkLimits(opts *config.Options, cfgs []executor.Config) error {
	for _, c := range cfgs {
		if b := c.Base(); b.StartTime > math.MaxInt64-c.MaxDuration() {
			return exitcode.Errorf(exitcode.InvalidConfig, "scenarios.%s.startTime: is too long: the scenario would end more than %s after the test starts",
				b.Name, time.Duration(math.MaxInt64))
		}
	}
	lim := vuLimit()
	if err := config.CheckLimits(opts, cfgs, lim); err != nil {
		return err
	}
	if lim.Max > 0 {
		if n := plannedVUs(cfgs); int64(n) > lim.Max {
			return exitcode.Errorf(exitcode.InvalidConfig, "scenarios: together the scenarios need %d VUs at once, more than %s", n, lim.Why)
		}
	}
	return nil
}
