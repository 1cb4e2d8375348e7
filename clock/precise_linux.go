//go:build linux

package clock

import (
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A timerFD is a kernel timer on CLOCK_MONOTONIC, the clock behind Go's
// monotonic time. A goroutine reading it is parked in the netpoller, which
// returns as soon as the kernel makes the descriptor readable: within tens
// of microseconds, where a Go timer can fire a millisecond late when the
// process is idle (the netpoller's timeout has millisecond resolution).
type timerFD struct {
	fd int
	f  *os.File
	rc syscall.RawConn
}

// timerFDs keeps idle timer descriptors for reuse. Each precise wait holds
// one for at most preciseSpan, so few are ever in use at once.
var timerFDs struct {
	sync.Mutex
	free []*timerFD
}

// maxIdleTimerFDs bounds the descriptors kept open between waits.
const maxIdleTimerFDs = 64

func getTimerFD() *timerFD {
	timerFDs.Lock()
	if n := len(timerFDs.free); n > 0 {
		t := timerFDs.free[n-1]
		timerFDs.free = timerFDs.free[:n-1]
		timerFDs.Unlock()
		return t
	}
	timerFDs.Unlock()
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	return &timerFD{fd: fd, f: f, rc: rc}
}

func putTimerFD(t *timerFD) {
	timerFDs.Lock()
	if len(timerFDs.free) < maxIdleTimerFDs {
		timerFDs.free = append(timerFDs.free, t)
		t = nil
	}
	timerFDs.Unlock()
	if t != nil {
		t.f.Close()
	}
}

// sleepPrecisely blocks for d on a kernel timer. It reports false, having
// not slept, if no timer descriptor is available.
func sleepPrecisely(d time.Duration) bool {
	t := getTimerFD()
	if t == nil {
		return false
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(t.fd, 0, &spec, nil); err != nil {
		t.f.Close()
		return false
	}
	var buf [8]byte
	err := t.rc.Read(func(fd uintptr) bool {
		_, err := unix.Read(int(fd), buf[:])
		return err != unix.EAGAIN
	})
	if err != nil {
		t.f.Close()
		return false
	}
	putTimerFD(t)
	return true
}
