//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/metronome-load/metronome/internal/testkit/memstat"
)

// peers are the other generators found on this machine; an empty path
// means the peer is absent and its comparisons are skipped.
type peers struct {
	k6, wrk2, wrk string
	// lines describe what was found, for the log and the report.
	lines []string
}

// findPeers looks for k6 ($K6_BINARY or k6 on PATH), wrk2 ($WRK2_BINARY
// or wrk2 on PATH; wrk2 builds a binary called wrk, so a plain wrk is
// never taken for it) and Debian's wrk (wrk on PATH, without -R). Each
// candidate must answer like the tool it claims to be.
func findPeers(ctx context.Context) peers {
	var p peers
	lookup := func(env, name string) string {
		if v := os.Getenv(env); v != "" {
			return v
		}
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
		return ""
	}

	if bin := lookup("K6_BINARY", "k6"); bin == "" {
		p.lines = append(p.lines, "k6: absent (set K6_BINARY or put k6 on PATH); its comparisons are skipped")
	} else if out, err := probe(ctx, bin, "version"); err != nil || !strings.HasPrefix(out, "k6 v") {
		p.lines = append(p.lines, fmt.Sprintf("k6: %s does not answer `version` like k6 (%v); its comparisons are skipped", bin, errOr(err, out)))
	} else {
		p.k6 = bin
		p.lines = append(p.lines, fmt.Sprintf("k6: %s (%s)", bin, firstLine(out)))
	}

	if bin := lookup("WRK2_BINARY", "wrk2"); bin == "" {
		p.lines = append(p.lines, "wrk2: absent (set WRK2_BINARY or put wrk2 on PATH); the open-model comparison with it is skipped")
	} else if out, err := probe(ctx, bin); !ran(err) {
		p.lines = append(p.lines, fmt.Sprintf("wrk2: %s cannot be run (%v); skipped", bin, err))
	} else if !takesRate(out) {
		p.lines = append(p.lines, fmt.Sprintf("wrk2: %s has no -R/--rate option, so it is not wrk2; skipped", bin))
	} else {
		p.wrk2 = bin
		p.lines = append(p.lines, "wrk2: "+bin)
	}

	if bin, err := exec.LookPath("wrk"); err != nil {
		p.lines = append(p.lines, "wrk: absent (put Debian's wrk on PATH); the closed-loop comparison with it is skipped")
	} else if out, err := probe(ctx, bin); !ran(err) {
		p.lines = append(p.lines, fmt.Sprintf("wrk: %s cannot be run (%v); skipped", bin, err))
	} else if !strings.Contains(out, "--connections") {
		p.lines = append(p.lines, fmt.Sprintf("wrk: %s does not print wrk's usage; skipped", bin))
	} else if takesRate(out) {
		p.lines = append(p.lines, fmt.Sprintf("wrk: %s is wrk2 (it takes -R), not the closed-loop wrk; skipped", bin))
	} else {
		p.wrk = bin
		p.lines = append(p.lines, "wrk: "+bin)
	}
	return p
}

// takesRate tells wrk2's usage text from wrk's: only wrk2 has --rate.
func takesRate(usage string) bool { return strings.Contains(usage, "--rate") }

// ran tells whether a probe started the program: wrk and wrk2 exit 1
// after printing their usage, which is fine.
func ran(err error) bool {
	var exit *exec.ExitError
	return err == nil || errors.As(err, &exit)
}

// probe runs a peer briefly and returns what it printed; wrk and wrk2
// print their usage and exit 1 when run without a URL.
func probe(ctx context.Context, bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func errOr(err error, out string) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("it printed %q", firstLine(out))
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(first)
}

// procResult is what the kernel and the loopback server saw of one
// generator process.
type procResult struct {
	// Start is when the process was started, Wall how long it ran.
	Start time.Time
	Wall  time.Duration
	// MaxRSS is the process's peak resident set in bytes, CPU its
	// user+system time, both from wait4's rusage (MaxRSS from sampling
	// when rusage's may be this program's own: see spawn).
	MaxRSS int64
	CPU    time.Duration
	// MaxAnon is the peak of the resident set's anonymous part (RssAnon in
	// /proc/PID/status, sampled every 100 ms; 0 without /proc): the
	// resident set less the pages of the executable and its libraries,
	// which the kernel maps from its page cache, 64 KB around each page
	// touched.
	MaxAnon int64
	// Exe is, at the sample where it was largest, how much of the
	// process's own executable was resident, by ELF section (see
	// exeResident; nil without /proc/PID/pagemap).
	Exe map[string]int64
	// Started is when the loopback server last received /started during
	// the run; zero when it did not.
	Started time.Time
	// ServerCPU is this process's user+system time meanwhile: the
	// loopback server's share (plus this program's small bookkeeping).
	ServerCPU time.Duration
	// Conns is the number of connections the server accepted.
	Conns int64
	// Load is the load average when the run began.
	Load string
	// Stdout is what the process printed on its standard output.
	Stdout string
}

// spawn runs one generator process in the scratch directory, killing it
// after limit, and collects its resource usage.
func (b *bench) spawn(ctx context.Context, name string, limit time.Duration, bin string, args ...string) (*procResult, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	cmd.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	var errs tail
	cmd.Stdout, cmd.Stderr = &stdout, &errs

	res := &procResult{Load: loadAvg()}
	b.logf("%s: load average %s; %s %s", name, res.Load, filepath.Base(bin), strings.Join(args, " "))
	conns0, cpu0, started0 := b.srv.conns.Load(), selfCPU(), b.srv.started.Load()
	selfPeak, _ := memstat.Status(0, "VmHWM")
	res.Start = time.Now()
	err := cmd.Start()
	var peak procPeak
	if err == nil {
		stop := make(chan struct{})
		peaks := make(chan procPeak)
		go func() { peaks <- samplePeaks(cmd.Process.Pid, stop) }()
		err = cmd.Wait()
		close(stop)
		peak = <-peaks
		res.MaxAnon, res.Exe = peak.anon, peak.exe
	}
	res.Wall, res.ServerCPU, res.Conns = time.Since(res.Start), selfCPU()-cpu0, b.srv.conns.Load()-conns0
	if s := b.srv.started.Load(); s != started0 {
		res.Started = time.Unix(0, s)
	}
	res.Stdout = stdout.String()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("%s did not finish within %s; output ends with:\n%s", name, limit, lastBytes(res.Stdout)+errs.String())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v; output ends with:\n%s", name, err, lastBytes(res.Stdout)+errs.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
		res.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	// Go starts a child sharing this process's memory until the exec, and
	// the kernel counts that memory's peak into the child's maxrss: a
	// figure that does not exceed this process's own peak may be this
	// process's, and the child's own peak, sampled, stands for it.
	if res.MaxRSS <= selfPeak && peak.rss > 0 {
		res.MaxRSS = peak.rss
	}
	return res, nil
}

// procPeak is the peak of a process's resident set and of its anonymous
// part, in bytes, and the largest sample of its executable's resident
// pages, as sampled.
type procPeak struct {
	rss, anon int64
	exe       map[string]int64
}

// samplePeaks samples the resident set's high-water mark (VmHWM), its
// anonymous part (RssAnon) and the executable's resident pages of process
// pid every 100 ms until stop is closed, and returns the largest samples.
// The executable's pages are read again only when the file-backed part
// (RssFile) has grown past its largest sample: reading them takes the
// bench's process 0.3–0.4 ms for metronome's executable, which it would
// otherwise spend ten times a second beside the generator it measures.
func samplePeaks(pid int, stop <-chan struct{}) procPeak {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var p procPeak
	var file int64 // the largest RssFile at which the executable was read
	for {
		if n, err := memstat.Status(pid, "VmHWM"); err == nil {
			p.rss = max(p.rss, n)
		}
		if n, err := memstat.Status(pid, "RssAnon"); err == nil {
			p.anon = max(p.anon, n)
		}
		if n, err := memstat.Status(pid, "RssFile"); err == nil && n > file {
			file = n
			if exe, err := exeResident(pid); err == nil && total(exe) > total(p.exe) {
				p.exe = exe
			}
		}
		select {
		case <-stop:
			return p
		case <-t.C:
		}
	}
}

func lastBytes(s string) string {
	if len(s) > tailSize {
		s = s[len(s)-tailSize:]
	}
	return s
}
