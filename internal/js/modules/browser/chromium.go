package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
// of its own (no background fetches, updates, sync or QUIC probes), a
// fresh profile in a temporary folder, its own process group, and killed
// by the kernel when metronome dies (chromedp sets Pdeathsig on Linux).
func (s settings) allocatorOptions() []chromedp.ExecAllocatorOption {
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
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), s.allocatorOptions()...)
	root, cancelRoot := chromedp.NewContext(alloc)
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(root) }()
	select {
	case err = <-started:
	case <-time.After(s.timeout):
		err = fmt.Errorf("timed out after %s", s.timeout)
	}
	stop := func() { cancelRoot(); cancelAlloc() }
	if err != nil {
		stop()
		return nil, fmt.Errorf("launching browser: %w", err)
	}
	p.root, p.stop, p.run = root, stop, run
	if c := chromedp.FromContext(root); c != nil && c.Browser != nil {
		p.version, p.userAgent = browserVersion(root)
	}
	if run != nil && run.Samples != nil {
		done := run.Samples.Done()
		go func() {
			<-done
			p.close(root)
		}()
	}
	return root, nil
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
