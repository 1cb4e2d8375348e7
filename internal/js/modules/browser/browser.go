// Package browser implements "k6/browser": a VU drives Chromium over the
// DevTools protocol with k6's API (browser, BrowserContext, Page,
// Locator, ElementHandle), and what the browser fetches and paints becomes
// k6's browser_* samples. One Chromium serves the whole metronome process:
// it starts on the first use and stops with the run; each VU gets a
// browser context of its own, which its next iteration replaces. A
// scenario must say options.browser.type: "chromium", as in k6.
package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/internal/wholefile"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
	"github.com/metronome-load/metronome/metrics"
)

func init() {
	modules.Register("k6/browser", modules.ModuleFunc(New))
}

// errNotInRegistry is k6's error for a scenario without a browser type.
var errNotInRegistry = errors.New("browser not found in registry. " +
	"make sure to set browser type option in scenario definition in order to use the browser module")

// defaultTimeout is k6's default for actions and navigations.
const defaultTimeout = 30 * time.Second

// bcontext is a browser context: its own cookies, cache and pages.
type bcontext struct {
	id      cdp.BrowserContextID
	root    context.Context
	mu      sync.Mutex
	pages   []*page
	timeout time.Duration
	closed  bool
	iter    iterKey
	obj     *sobek.Object
}

func (bc *bcontext) actionTimeout() time.Duration {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	return bc.timeout
}

func (bc *bcontext) isClosed() bool {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	return bc.closed
}

// close closes the context's pages and disposes of it.
func (bc *bcontext) close() {
	bc.mu.Lock()
	if bc.closed {
		bc.mu.Unlock()
		return
	}
	bc.closed = true
	pages := bc.pages
	bc.mu.Unlock()
	for _, p := range pages {
		p.close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if c := chromedp.FromContext(bc.root); c != nil && c.Browser != nil {
		_, _ = cdp.Call(ctx, c.Browser, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: bc.id})
	}
}

// iterKey names an iteration of a VU: a context lives for one.
type iterKey struct {
	scenario string
	iter     int64
}

// vuBrowser is the module's state in one VU.
type vuBrowser struct {
	vu      modules.VU
	m       *Metrics
	current *bcontext
	types   map[string]string // scenario → options.browser.type
}

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	b := &vuBrowser{vu: vu, types: map[string]string{}}
	if env := vu.InitEnv(); env != nil && env.Registry != nil {
		m, err := Define(env.Registry)
		if err != nil {
			return modules.Exports{}, err
		}
		b.m = m
	}
	return modules.Exports{Named: map[string]any{"browser": b.browserObject()}}, nil
}

// fn makes a JavaScript function of f.
func (b *vuBrowser) fn(f func(c sobek.FunctionCall) sobek.Value) sobek.Value {
	return b.vu.Runtime().ToValue(f)
}

// object makes an object with the given methods.
func (b *vuBrowser) object(methods map[string]func(c sobek.FunctionCall) sobek.Value) *sobek.Object {
	rt := b.vu.Runtime()
	o := rt.NewObject()
	for name, f := range methods {
		_ = o.Set(name, b.fn(f))
	}
	return o
}

// async runs work off the VU's goroutine and settles a promise with its
// outcome; a failure rejects with the error's words alone, as k6's
// promises do.
func (b *vuBrowser) async(work func(ctx context.Context) (func(rt *sobek.Runtime) (any, error), error)) sobek.Value {
	ctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(b.vu.Context(), cancel)
	return jsmod.Async(b.vu, func() (func(rt *sobek.Runtime) (any, error), error) {
		defer stop()
		defer cancel()
		v, err := work(ctx)
		if err != nil {
			return nil, &jsmod.Bare{Err: err}
		}
		if v == nil {
			v = func(*sobek.Runtime) (any, error) { return sobek.Undefined(), nil }
		}
		return v, nil
	})
}

// state is the VU's state, or an error outside an iteration.
func (b *vuBrowser) state() (*modules.State, error) {
	st := b.vu.State()
	if st == nil || st.Current.Scenario == nil {
		return nil, errNotInRegistry
	}
	return st, nil
}

// checkType checks that the current scenario asks for a browser.
func (b *vuBrowser) checkType(st *modules.State) error {
	name := st.Current.Scenario.Name
	typ, ok := b.types[name]
	if !ok && st.Options != nil {
		var sc struct {
			Options struct {
				Browser struct {
					Type string `json:"type"`
				} `json:"browser"`
			} `json:"options"`
		}
		if raw, found := st.Options.Scenarios[name]; found {
			_ = json.Unmarshal(raw, &sc)
		}
		typ = sc.Options.Browser.Type
		b.types[name] = typ
	}
	if typ == "" {
		return errNotInRegistry
	}
	if typ != "chromium" {
		return fmt.Errorf("unsupported browser type: %s", typ)
	}
	return nil
}

// tagHolder holds the tags a page's samples carry, which its events read
// on their own goroutine: the VU's tags of the last time the script called
// into the page, so a group around a call tags what the call loads.
type tagHolder struct {
	mu   sync.Mutex
	tags *metrics.TagSet
	sys  map[string]bool
}

func (h *tagHolder) set(st *modules.State) {
	h.mu.Lock()
	h.tags, h.sys = st.Tags, st.SystemTags
	h.mu.Unlock()
}

func (h *tagHolder) get() (*metrics.TagSet, map[string]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tags, h.sys
}

// currentContext returns the VU's context, closing one left from an
// earlier iteration.
func (b *vuBrowser) currentContext(st *modules.State) *bcontext {
	if b.current == nil {
		return nil
	}
	key := iterKey{st.Current.Scenario.Name, st.Iteration}
	if b.current.iter != key || b.current.isClosed() {
		old := b.current
		b.current = nil
		go old.close()
		return nil
	}
	return b.current
}

// newContext makes the VU's browser context.
func (b *vuBrowser) newContext(verb string) (func(ctx context.Context) (*bcontext, error), error) {
	st, err := b.state()
	if err == nil {
		err = b.checkType(st)
	}
	if err != nil {
		return nil, err
	}
	if b.current = b.currentContext(st); b.current != nil {
		return nil, fmt.Errorf("%sexisting browser context must be closed before creating a new one", verb)
	}
	if b.m == nil {
		if b.m, err = Define(st.Registry); err != nil {
			return nil, err
		}
	}
	bc := &bcontext{timeout: defaultTimeout, iter: iterKey{st.Current.Scenario.Name, st.Iteration}}
	b.current = bc
	run := st.Run
	return func(ctx context.Context) (*bcontext, error) {
		root, err := chromium.get(run)
		if err != nil {
			return nil, err
		}
		c := chromedp.FromContext(root)
		res, err := cdp.Call(ctx, c.Browser, target.CreateBrowserContext, target.CreateBrowserContextParams{DisposeOnDetach: ptr(true)})
		if err != nil {
			return nil, fmt.Errorf("%snew browser context: %w", verb, err)
		}
		bc.id, bc.root = res.BrowserContextID, root
		return bc, nil
	}, nil
}

// openPage opens a page in bc, with its samples tagged as the VU's.
func (b *vuBrowser) openPage(bc *bcontext, st *modules.State) (func(ctx context.Context) (*page, error), *tagHolder) {
	h := &tagHolder{}
	h.set(st)
	in := st.Run.Samples
	send := func(batch []metrics.Sample) { go in.Send(batch) }
	m := b.m
	return func(ctx context.Context) (*page, error) {
		p, err := newPage(bc, newNetTracker(m, h.get, send))
		if err != nil {
			return nil, fmt.Errorf("new page: %w", err)
		}
		bc.mu.Lock()
		if bc.closed {
			bc.mu.Unlock()
			p.close()
			return nil, errors.New("new page: browser context is closed")
		}
		bc.pages = append(bc.pages, p)
		bc.mu.Unlock()
		return p, nil
	}, h
}

func (b *vuBrowser) browserObject() *sobek.Object {
	rt := b.vu.Runtime()
	return b.object(map[string]func(sobek.FunctionCall) sobek.Value{
		"newContext": func(c sobek.FunctionCall) sobek.Value {
			mk, err := b.newContext("")
			if err != nil {
				return jsmod.Settled(rt, nil, &jsmod.Bare{Err: err})
			}
			var bc *bcontext
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				var err error
				if bc, err = mk(ctx); err != nil {
					return nil, err
				}
				return func(*sobek.Runtime) (any, error) { return b.contextObject(bc), nil }, nil
			})
		},
		"newPage": func(c sobek.FunctionCall) sobek.Value {
			mk, err := b.newContext("new page: ")
			if err != nil {
				return jsmod.Settled(rt, nil, &jsmod.Bare{Err: err})
			}
			st := b.vu.State()
			bc := b.current
			open, h := b.openPage(bc, st)
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				if _, err := mk(ctx); err != nil {
					return nil, err
				}
				p, err := open(ctx)
				if err != nil {
					return nil, err
				}
				return func(*sobek.Runtime) (any, error) { return b.pageObject(p, h), nil }, nil
			})
		},
		"context": func(c sobek.FunctionCall) sobek.Value {
			st := b.vu.State()
			if st == nil || st.Current.Scenario == nil {
				return sobek.Null()
			}
			if bc := b.currentContext(st); bc != nil {
				return b.contextObject(bc)
			}
			return sobek.Null()
		},
		"closeContext": func(c sobek.FunctionCall) sobek.Value {
			st := b.vu.State()
			var bc *bcontext
			if st != nil && st.Current.Scenario != nil {
				bc = b.currentContext(st)
			}
			if bc == nil {
				return jsmod.Settled(rt, nil, &jsmod.Bare{Err: errors.New("cannot close context: no browser context is open")})
			}
			b.current = nil
			return b.async(func(context.Context) (func(*sobek.Runtime) (any, error), error) {
				bc.close()
				return nil, nil
			})
		},
		"isConnected": func(c sobek.FunctionCall) sobek.Value {
			chromium.mu.Lock()
			defer chromium.mu.Unlock()
			return rt.ToValue(chromium.root != nil && chromium.root.Err() == nil)
		},
		"version": func(c sobek.FunctionCall) sobek.Value {
			chromium.mu.Lock()
			defer chromium.mu.Unlock()
			return rt.ToValue(chromium.version)
		},
	})
}

// browserVersion is the browser's version as k6 gives it
// ("120.0.6099.71") and the user agent its pages send.
func browserVersion(root context.Context) (version, userAgent string) {
	c := chromedp.FromContext(root)
	ctx, cancel := context.WithTimeout(root, 5*time.Second)
	defer cancel()
	v, err := cdp.Call(ctx, c.Browser, cdpbrowser.GetVersion, cdp.Empty{})
	if err != nil {
		return "", ""
	}
	version = v.Product
	if _, after, ok := strings.Cut(v.Product, "/"); ok {
		version = after
	}
	return version, strings.Replace(v.UserAgent, "HeadlessChrome", "Chrome", 1)
}

func (b *vuBrowser) contextObject(bc *bcontext) *sobek.Object {
	if bc.obj != nil {
		return bc.obj
	}
	rt := b.vu.Runtime()
	bc.obj = b.object(map[string]func(sobek.FunctionCall) sobek.Value{
		"newPage": func(c sobek.FunctionCall) sobek.Value {
			st := b.vu.State()
			if st == nil {
				return jsmod.Settled(rt, nil, &jsmod.Bare{Err: errNotInRegistry})
			}
			open, h := b.openPage(bc, st)
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				p, err := open(ctx)
				if err != nil {
					return nil, err
				}
				return func(*sobek.Runtime) (any, error) { return b.pageObject(p, h), nil }, nil
			})
		},
		"pages": func(c sobek.FunctionCall) sobek.Value {
			bc.mu.Lock()
			defer bc.mu.Unlock()
			out := []any{}
			for _, p := range bc.pages {
				if !p.isClosed() && p.obj != nil {
					out = append(out, p.obj)
				}
			}
			return rt.ToValue(out)
		},
		"close": func(c sobek.FunctionCall) sobek.Value {
			if b.current == bc {
				b.current = nil
			}
			return b.async(func(context.Context) (func(*sobek.Runtime) (any, error), error) {
				bc.close()
				return nil, nil
			})
		},
		"setDefaultTimeout": func(c sobek.FunctionCall) sobek.Value {
			ms := jsmod.Int(rt, c.Argument(0), "timeout", 0, 1<<40)
			bc.mu.Lock()
			bc.timeout = time.Duration(ms) * time.Millisecond
			bc.mu.Unlock()
			return sobek.Undefined()
		},
		"addCookies": func(c sobek.FunctionCall) sobek.Value {
			var cookies []*network.CookieParam
			raw, err := json.Marshal(c.Argument(0).Export())
			if err == nil {
				err = json.Unmarshal(raw, &cookies)
			}
			if err != nil {
				jsmod.ThrowTypeError(rt, "cookies must be an array of cookie objects: %v", err)
			}
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				br := chromedp.FromContext(bc.root).Browser
				_, err := cdp.Call(ctx, br, storage.SetCookies, storage.SetCookiesParams{Cookies: cookies, BrowserContextID: bc.id})
				return nil, err
			})
		},
		"cookies": func(c sobek.FunctionCall) sobek.Value {
			var urls []string
			for _, a := range c.Arguments {
				urls = append(urls, a.String())
			}
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				br := chromedp.FromContext(bc.root).Browser
				res, err := cdp.Call(ctx, br, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: bc.id})
				if err != nil {
					return nil, err
				}
				raw, err := json.Marshal(filterCookies(res.Cookies, urls))
				if err != nil {
					return nil, err
				}
				return jsonValue(string(raw)), nil
			})
		},
		"clearCookies": func(c sobek.FunctionCall) sobek.Value {
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				br := chromedp.FromContext(bc.root).Browser
				_, err := cdp.Call(ctx, br, storage.ClearCookies, storage.ClearCookiesParams{BrowserContextID: bc.id})
				return nil, err
			})
		},
	})
	return bc.obj
}

// jsonValue makes the JavaScript value of a JSON text on the VU's
// goroutine.
func jsonValue(text string) func(rt *sobek.Runtime) (any, error) {
	return func(rt *sobek.Runtime) (any, error) {
		if text == "" {
			return sobek.Undefined(), nil
		}
		parse, _ := sobek.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse"))
		return parse(sobek.Undefined(), rt.ToValue(text))
	}
}

// writeFile writes a screenshot, making its folder; it is written whole or
// not at all, as every file metronome writes for the user.
func writeFile(path string, data []byte) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return wholefile.Write(path, data, 0o644)
}

// filterCookies keeps the cookies that would be sent to one of urls (all
// of them when urls is empty).
func filterCookies(all []*network.Cookie, urls []string) []*network.Cookie {
	if len(urls) == 0 {
		return all
	}
	var out []*network.Cookie
	for _, c := range all {
		for _, u := range urls {
			host := u
			if i := strings.Index(host, "://"); i >= 0 {
				host = host[i+3:]
			}
			path := "/"
			if i := strings.IndexByte(host, '/'); i >= 0 {
				host, path = host[:i], host[i:]
			}
			if i := strings.LastIndexByte(host, ':'); i >= 0 {
				host = host[:i]
			}
			d := strings.TrimPrefix(c.Domain, ".")
			if (host == d || strings.HasSuffix(host, "."+d)) && strings.HasPrefix(path, c.Path) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}
