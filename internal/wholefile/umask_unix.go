//go:build unix

package wholefile

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// umask is the process's file mode creation mask, read once: a temporary
// file is created 0600, so the mode os.WriteFile would give is set after.
// Linux tells it in /proc; elsewhere it is set and restored, which a file
// created by another goroutine in between would miss.
var umask = sync.OnceValue(func() os.FileMode {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return os.FileMode(m)
				}
			}
		}
	}
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
})
