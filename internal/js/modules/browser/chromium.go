package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/metronome-load/metronome/js/modules"
)

// The settings k6 reads from the environment, under k6's names.
const (
	envExecutablePath = "K6_BROWSER_EXECUTABLE_PATH"
	envArgs           = "K6_BROWSER_ARGS"
	envHeadless       = "K6_BROWSER_HEADLESS"
	envTimeout        = "K6_BROWSER_TIMEOUT"
)

// defaultPaths are where k6 looks for a browser when
// K6_BROWSER_EXECUTABLE_PATH is not set: names found on PATH, then an
// absolute path, in this order (the Unix-like part of k6's list).
var defaultPaths = []string{
	"headless_shell", "headless-shell", "chromium", "chromium-browser",
	"google-chrome", "google-chrome-stable", "google-chrome-beta",
	"google-chrome-unstable", "/usr/bin/google-chrome",
}

// errNotInstalled and errNotAtPath are k6's words for a browser that is
// not there, with metronome's name for k6's.
var (
	errNotInstalled = errors.New("metronome couldn't detect google chrome or a chromium-supported browser on this system")
	errNotAtPath    = errors.New("metronome couldn't detect google chrome or a chromium-supported browser on the given path")
)

// settings are the browser process's launch settings.
type settings struct {
	path     string
	args     []string // "name" or "name=value", as K6_BROWSER_ARGS lists them
	headless bool
	timeout  time.Duration
}

// readSettings reads the launch settings from metronome's environment.
func readSettings(lookup func(string) (string, bool)) (settings, error) {
	s := settings{headless: true, timeout: 30 * time.Second}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if v, ok := lookup(envHeadless); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return s, fmt.Errorf("%s: %q is not a boolean", envHeadless, v)
		}
		s.headless = b
	}
	if v, ok := lookup(envTimeout); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return s, fmt.Errorf("%s: %q is not a positive duration", envTimeout, v)
		}
		s.timeout = d
	}
	if v, ok := lookup(envArgs); ok {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				s.args = append(s.args, strings.TrimLeft(a, "-"))
			}
		}
	}
	path, err := executablePath(lookup)
	if err != nil {
		return s, fmt.Errorf("finding browser executable: %w", err)
	}
	s.path = path
	return s, nil
}

// executablePath finds the browser as k6 does: the path the environment
// names, or the first of defaultPaths that exists.
func executablePath(lookup func(string) (string, bool)) (string, error) {
	if p, ok := lookup(envExecutablePath); ok && strings.TrimSpace(p) != "" {
		p = strings.TrimSpace(p)
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("%w: %s", errNotAtPath, p)
		}
		return p, nil
	}
	for _, p := range defaultPaths {
		if found, err := exec.LookPath(p); err == nil {
			return found, nil
		}
	}
	return "", errNotInstalled
}

// allocatorOptions are Chromium's flags: headless when asked, no network
// of its own (no background fetches, updates, sync or QUIC probes), its
// own process group, and killed by the kernel when metronome dies
// (chromedp sets Pdeathsig on Linux). The command to start it is given to
// keep before it starts.
func (s settings) allocatorOptions(keep func(*exec.Cmd)) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(s.path),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.WindowSize(1280, 720),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.Setpgid = true
			keep(cmd)
		}),
	}
	if s.headless {
		opts = append(opts, chromedp.Headless, chromedp.DisableGPU)
	}
	// Chromium refuses to start as root with its sandbox on.
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	for _, a := range s.args {
		name, value, hasValue := strings.Cut(a, "=")
		if hasValue {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	return opts
}

// process is the one Chromium of a metronome process. It starts on the
// first browser VU's first use and stops when the run ends (its sample
// inlet closes) or the process exits.
type process struct {
	mu      sync.Mutex
	root    context.Context // the browser's first tab; nil until started
	stop    func()
	err     error
	version string
	// userAgent is the browser's own with "HeadlessChrome" said as
	// "Chrome", which every page sends, as k6's pages do.
	userAgent string
	run       *modules.Run
}

var chromium process

// get returns the browser's root context, starting Chromium on first use.
func (p *process) get(run *modules.Run) (context.Context, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.root != nil && p.root.Err() == nil && p.run == run {
		return p.root, nil
	}
	if p.stop != nil {
		p.stop()
		p.root, p.stop = nil, nil
	}
	var lookup func(string) (string, bool)
	if run != nil {
		lookup = run.LookupEnv
	}
	s, err := readSettings(lookup)
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "metronome-chromium-")
	if err != nil {
		return nil, fmt.Errorf("launching browser: %w", err)
	}
	var cmd *exec.Cmd
	opts := append(s.allocatorOptions(func(c *exec.Cmd) { cmd = c }), chromedp.UserDataDir(profile))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	root, cancelRoot := chromedp.NewContext(alloc)
	stop := func() {
		cancelRoot()
		cancelAlloc() // returns once chromedp's start of the command has ended
		pid := 0
		if cmd != nil && cmd.Process != nil {
			pid = cmd.Process.Pid
		}
		reap(pid, profile, reapWait)
	}
	// The run's end stops the browser before metronome exits: it ends a
	// start under way (whose stop is below) and then waits for p.mu.
	ended := make(chan struct{})
	if run != nil && run.Samples != nil && !run.Samples.AtClose(func() { close(ended); p.close(root) }) {
		stop()
		return nil, fmt.Errorf("launching browser: %w", errRunEnded)
	}
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(root) }()
	select {
	case err = <-started:
	case <-time.After(s.timeout):
		err = fmt.Errorf("timed out after %s", s.timeout)
	case <-ended:
		err = errRunEnded
	}
	if err != nil {
		stop()
		return nil, fmt.Errorf("launching browser: %w", err)
	}
	p.root, p.stop, p.run = root, stop, run
	p.version, p.userAgent = browserVersion(root)
	return root, nil
}

// errRunEnded is why a browser asked for after the run ended, or while it
// ended, does not start.
var errRunEnded = errors.New("the test run has ended")

// reapWait bounds how long stopping the browser waits for its processes.
const reapWait = 10 * time.Second

// reap ends what is left of the browser whose process group is pid's
// (its renderers, GPU and utility processes outlive the browser process
// chromedp kills by a moment) and removes its profile folder, and the
// folder of its singleton socket that the profile links to, once none
// writes to them any more, trying until wait has passed.
func reap(pid int, profile string, wait time.Duration) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	folders := []string{profile}
	// Chromium keeps the socket in a folder of its own under TMPDIR
	// (a socket's path is short) and removes it only when it exits
	// normally.
	if sock, err := os.Readlink(filepath.Join(profile, "SingletonSocket")); err == nil && filepath.IsAbs(sock) &&
		strings.HasPrefix(filepath.Base(filepath.Dir(sock)), "org.chromium.Chromium.") {
		folders = append(folders, filepath.Dir(sock))
	}
	deadline := time.Now().Add(wait)
	for {
		removed := true
		for _, f := range folders {
			if os.RemoveAll(f) != nil {
				removed = false
			}
		}
		if removed && (pid <= 0 || !groupRuns(pid)) || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// close stops the browser whose root context is root, if it still runs.
func (p *process) close(root context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.root == root && p.stop != nil {
		p.stop()
		p.root, p.stop = nil, nil
	}
}

// groupRuns says whether a process of process group pgid still runs: one
// that is not a zombie waiting for whoever adopted it to reap it.
func groupRuns(pgid int) bool {
	if syscall.Kill(-pgid, 0) == syscall.ESRCH {
		return false
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		var state string
		var ppid, pgrp int
		if _, err := fmt.Sscan(string(b[i+1:]), &state, &ppid, &pgrp); err == nil && pgrp == pgid && state != "Z" {
			return true
		}
	}
	return false
}
