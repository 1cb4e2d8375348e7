package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules/jsmod"
)

type methods = map[string]func(c sobek.FunctionCall) sobek.Value

// option reads key of an options object; nil when absent.
func option(v sobek.Value, key string) sobek.Value {
	if jsmod.Absent(v) {
		return nil
	}
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil
	}
	if x := o.Get(key); !jsmod.Absent(x) {
		return x
	}
	return nil
}

// timeoutOf is an options object's timeout (milliseconds), or def; 0
// means no limit, as in k6.
func timeoutOf(opts sobek.Value, def time.Duration) time.Duration {
	if v := option(opts, "timeout"); v != nil {
		ms := v.ToFloat()
		if ms <= 0 {
			return 24 * time.Hour
		}
		return time.Duration(ms * float64(time.Millisecond))
	}
	return def
}

func stringOption(opts sobek.Value, key, def string) string {
	if v := option(opts, key); v != nil {
		return v.String()
	}
	return def
}

// pageObject is the script's Page.
func (b *vuBrowser) pageObject(p *page, h *tagHolder) *sobek.Object {
	if p.obj != nil {
		return p.obj
	}
	rt := b.vu.Runtime()
	// touch records the VU's tags for the page's samples: those of the
	// group the script is in when it calls into the page.
	touch := func() {
		if st := b.vu.State(); st != nil {
			h.set(st)
		}
	}
	loc := func(parts []part, desc string) *sobek.Object { return b.locatorObject(p, parts, desc, touch) }
	byMethods := getBy(rt, nil, "", loc)
	m := methods{
		"goto": func(c sobek.FunctionCall) sobek.Value {
			touch()
			url := jsmod.String(rt, c.Argument(0), "url")
			opts := c.Argument(1)
			to := timeoutOf(opts, p.bc.actionTimeout())
			waitUntil := stringOption(opts, "waitUntil", "load")
			return b.navigate(p, h, url, waitUntil, to)
		},
		"url": func(c sobek.FunctionCall) sobek.Value { return rt.ToValue(p.URL()) },
		"locator": func(c sobek.FunctionCall) sobek.Value {
			sel := jsmod.String(rt, c.Argument(0), "selector")
			return loc(parseSelector(sel), sel)
		},
		"close": func(c sobek.FunctionCall) sobek.Value {
			touch()
			return b.async(func(context.Context) (func(*sobek.Runtime) (any, error), error) {
				p.close()
				return nil, nil
			})
		},
		"isClosed": func(c sobek.FunctionCall) sobek.Value { return rt.ToValue(p.isClosed()) },
		"context":  func(c sobek.FunctionCall) sobek.Value { return b.contextObject(p.bc) },
		"title": func(c sobek.FunctionCall) sobek.Value {
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				return p.evaluate(ctx, `document.title`, false, nil)
			})
		},
		"content": func(c sobek.FunctionCall) sobek.Value {
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				return p.evaluate(ctx, `(() => { let s = ""; if (document.doctype) s = new XMLSerializer().serializeToString(document.doctype); return s + (document.documentElement ? document.documentElement.outerHTML : ""); })()`, false, nil)
			})
		},
		"evaluate": func(c sobek.FunctionCall) sobek.Value {
			touch()
			expr, isFn, arg := b.evalArgs(c)
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				return p.evaluate(ctx, expr, isFn, arg)
			})
		},
		"waitForTimeout": func(c sobek.FunctionCall) sobek.Value {
			ms := c.Argument(0).ToFloat()
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				select {
				case <-time.After(time.Duration(ms * float64(time.Millisecond))):
					return nil, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			})
		},
		"waitForNavigation": func(c sobek.FunctionCall) sobek.Value {
			touch()
			opts := c.Argument(0)
			to := timeoutOf(opts, p.bc.actionTimeout())
			waitUntil := stringOption(opts, "waitUntil", "load")
			p.mu.Lock()
			gen := p.navGen + 1
			p.mu.Unlock()
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				ctx, cancel := context.WithTimeout(ctx, to)
				defer cancel()
				if err := p.waitLoadState(ctx, gen, waitUntil); err != nil {
					if ctx.Err() == context.DeadlineExceeded {
						return nil, fmt.Errorf("waiting for navigation: timed out after %s", to)
					}
					return nil, err
				}
				return func(*sobek.Runtime) (any, error) { return sobek.Null(), nil }, nil
			})
		},
		"waitForLoadState": func(c sobek.FunctionCall) sobek.Value {
			state := "load"
			if !jsmod.Absent(c.Argument(0)) {
				state = c.Argument(0).String()
			}
			to := timeoutOf(c.Argument(1), p.bc.actionTimeout())
			p.mu.Lock()
			gen := p.navGen
			p.mu.Unlock()
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				ctx, cancel := context.WithTimeout(ctx, to)
				defer cancel()
				if err := p.waitLoadState(ctx, gen, state); err != nil {
					if ctx.Err() == context.DeadlineExceeded {
						return nil, fmt.Errorf("waiting for load state %s: timed out after %s", state, to)
					}
					return nil, err
				}
				return nil, nil
			})
		},
		"waitForSelector": func(c sobek.FunctionCall) sobek.Value {
			sel := jsmod.String(rt, c.Argument(0), "selector")
			return b.waitFor(elementRef{p: p, parts: parseSelector(sel), desc: sel}, c.Argument(1), p.bc.actionTimeout(), "waiting for selector", true)
		},
		"screenshot": func(c sobek.FunctionCall) sobek.Value {
			opts := c.Argument(0)
			path := stringOption(opts, "path", "")
			full := option(opts, "fullPage") != nil && option(opts, "fullPage").ToBoolean()
			format := stringOption(opts, "type", "")
			if format == "" {
				format = "png"
				if strings.HasSuffix(path, ".jpg") || strings.HasSuffix(path, ".jpeg") {
					format = "jpeg"
				}
			}
			var quality *int64
			if q := option(opts, "quality"); q != nil {
				quality = ptr(q.ToInteger())
			}
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				params := cdppage.CaptureScreenshotParams{Format: cdppage.CaptureScreenshotFormat(format), Quality: quality, FromSurface: ptr(true)}
				if full {
					params.CaptureBeyondViewport = ptr(true)
					lm, err := cdp.Call(ctx, p.t, cdppage.GetLayoutMetrics, cdp.Empty{})
					if err == nil && lm.CSSContentSize != nil {
						params.Clip = &cdppage.Viewport{Width: lm.CSSContentSize.Width, Height: lm.CSSContentSize.Height, Scale: 1}
					}
				}
				res, err := cdp.Call(ctx, p.t, cdppage.CaptureScreenshot, params)
				if err != nil {
					return nil, fmt.Errorf("taking screenshot: %w", err)
				}
				if path != "" {
					if err := writeFile(path, res.Data); err != nil {
						return nil, fmt.Errorf("taking screenshot: %w", err)
					}
				}
				data := res.Data
				return func(rt *sobek.Runtime) (any, error) { return rt.NewArrayBuffer(data), nil }, nil
			})
		},
		"setViewportSize": func(c sobek.FunctionCall) sobek.Value {
			size := jsmod.Object(rt, c.Argument(0), "viewportSize")
			w, hgt := size.Get("width").ToInteger(), size.Get("height").ToInteger()
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				_, err := cdp.Call(ctx, p.t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: w, Height: hgt, DeviceScaleFactor: 1})
				return nil, err
			})
		},
		"$": func(c sobek.FunctionCall) sobek.Value {
			sel := jsmod.String(rt, c.Argument(0), "selector")
			return b.query(p, nil, parseSelector(sel), false)
		},
		"$$": func(c sobek.FunctionCall) sobek.Value {
			sel := jsmod.String(rt, c.Argument(0), "selector")
			return b.query(p, nil, parseSelector(sel), true)
		},
	}
	for name, f := range byMethods {
		m[name] = f
	}
	// The page's own element methods: the locator's, on a selector.
	for _, name := range []string{"click", "dblclick", "fill", "type", "press", "textContent", "innerText", "innerHTML", "getAttribute", "inputValue", "isVisible", "isHidden", "isChecked", "check", "uncheck", "hover", "selectOption", "focus", "isEnabled", "isDisabled"} {
		name := name
		m[name] = func(c sobek.FunctionCall) sobek.Value {
			sel := jsmod.String(rt, c.Argument(0), "selector")
			l := loc(parseSelector(sel), sel)
			f, _ := sobek.AssertFunction(l.Get(name))
			v, err := f(l, c.Arguments[1:]...)
			if err != nil {
				panic(err)
			}
			return v
		}
	}
	p.obj = b.object(m)
	return p.obj
}

// getBy makes the getBy* methods that add a part to parts.
func getBy(rt *sobek.Runtime, parts []part, desc string, loc func([]part, string) *sobek.Object) methods {
	with := func(p part, d string) *sobek.Object {
		next := append(append([]part{}, parts...), p)
		if desc != "" {
			d = desc + " >> " + d
		}
		return loc(next, d)
	}
	exact := func(opts sobek.Value) bool {
		v := option(opts, "exact")
		return v != nil && v.ToBoolean()
	}
	text := func(c sobek.FunctionCall, what string) string {
		return jsmod.String(rt, c.Argument(0), what)
	}
	return methods{
		"getByRole": func(c sobek.FunctionCall) sobek.Value {
			if jsmod.Absent(c.Argument(0)) {
				jsmod.Throwf(rt, "missing required argument 'role'")
			}
			role := c.Argument(0).String()
			opts := c.Argument(1)
			p := part{Kind: "role", Value: role, Exact: exact(opts)}
			d := "internal:role=" + role
			if v := option(opts, "name"); v != nil {
				p.Name = v.String()
				d += fmt.Sprintf("[name=%q]", v.String())
			}
			if v := option(opts, "checked"); v != nil {
				p.Checked = ptr(v.ToBoolean())
			}
			if v := option(opts, "level"); v != nil {
				p.Level = ptr(v.ToInteger())
			}
			return with(p, d)
		},
		"getByText": func(c sobek.FunctionCall) sobek.Value {
			t := text(c, "text")
			return with(part{Kind: "text", Value: t, Exact: exact(c.Argument(1))}, "internal:text="+fmt.Sprintf("%q", t))
		},
		"getByLabel": func(c sobek.FunctionCall) sobek.Value {
			t := text(c, "text")
			return with(part{Kind: "label", Value: t, Exact: exact(c.Argument(1))}, "internal:label="+fmt.Sprintf("%q", t))
		},
		"getByPlaceholder": func(c sobek.FunctionCall) sobek.Value {
			t := text(c, "text")
			return with(part{Kind: "attr", Name: "placeholder", Value: t, Exact: exact(c.Argument(1))}, "internal:attr=[placeholder="+fmt.Sprintf("%q", t)+"]")
		},
		"getByAltText": func(c sobek.FunctionCall) sobek.Value {
			t := text(c, "text")
			return with(part{Kind: "attr", Name: "alt", Value: t, Exact: exact(c.Argument(1))}, "internal:attr=[alt="+fmt.Sprintf("%q", t)+"]")
		},
		"getByTitle": func(c sobek.FunctionCall) sobek.Value {
			t := text(c, "text")
			return with(part{Kind: "attr", Name: "title", Value: t, Exact: exact(c.Argument(1))}, "internal:attr=[title="+fmt.Sprintf("%q", t)+"]")
		},
		"getByTestId": func(c sobek.FunctionCall) sobek.Value {
			t := text(c, "testId")
			return with(part{Kind: "attr", Name: "data-testid", Value: t, Exact: true}, "internal:testid=[data-testid="+fmt.Sprintf("%q", t)+"]")
		},
	}
}

// evalArgs reads evaluate's arguments: a function (its source) or an
// expression, and one argument.
func (b *vuBrowser) evalArgs(c sobek.FunctionCall) (expr string, isFn bool, arg any) {
	rt := b.vu.Runtime()
	v := c.Argument(0)
	if _, ok := sobek.AssertFunction(v); ok {
		expr, isFn = v.String(), true
	} else if sobek.IsString(v) {
		expr = v.String()
	} else {
		jsmod.ThrowTypeError(rt, "evaluate needs a function or a string, not %s", jsmod.Describe(v))
	}
	if len(c.Arguments) > 1 {
		arg = c.Argument(1).Export()
	}
	return expr, isFn, arg
}

// evaluate runs a script's function or expression in the page and gives
// its JSON result back.
func (p *page) evaluate(ctx context.Context, expr string, isFn bool, arg any) (func(*sobek.Runtime) (any, error), error) {
	if isFn {
		a, err := json.Marshal(arg)
		if err != nil {
			return nil, err
		}
		expr = "(" + expr + ")(" + string(a) + ")"
	}
	res, err := cdp.Call(ctx, p.t, runtime.Evaluate, runtime.EvaluateParams{
		Expression:    `(async () => { const v = await (` + expr + `); return v === undefined ? "" : JSON.stringify(v); })()`,
		ReturnByValue: ptr(true), AwaitPromise: ptr(true), UserGesture: ptr(true),
	})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, exceptionError(res.ExceptionDetails)
	}
	var text string
	if res.Result != nil {
		_ = json.Unmarshal(res.Result.Value, &text)
	}
	return jsonValue(text), nil
}

// responseObject is the script's Response of a navigation.
func (b *vuBrowser) responseObject(r *network.Response) *sobek.Object {
	rt := b.vu.Runtime()
	headers := map[string]any{}
	for k, v := range r.Headers {
		headers[strings.ToLower(k)] = v
	}
	return b.object(methods{
		"status":     func(sobek.FunctionCall) sobek.Value { return rt.ToValue(r.Status) },
		"statusText": func(sobek.FunctionCall) sobek.Value { return rt.ToValue(r.StatusText) },
		"url":        func(sobek.FunctionCall) sobek.Value { return rt.ToValue(r.URL) },
		"ok": func(sobek.FunctionCall) sobek.Value {
			return rt.ToValue(r.Status == 0 || r.Status >= 200 && r.Status <= 299)
		},
		"headers": func(sobek.FunctionCall) sobek.Value { return rt.ToValue(headers) },
	})
}

// query is page.$ and page.$$ (within is nil) and an element handle's
// $ and $$: handles of the elements the parts find now.
func (b *vuBrowser) query(p *page, within *handle, parts []part, all bool) sobek.Value {
	partsJSON, _ := json.Marshal(parts)
	return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
		var list *runtime.RemoteObject
		if within == nil {
			res, err := cdp.Call(ctx, p.t, runtime.Evaluate, runtime.EvaluateParams{Expression: `globalThis.__metronome ? __metronome.all(` + string(partsJSON) + `) : []`})
			if err != nil {
				return nil, err
			}
			if res.ExceptionDetails != nil {
				return nil, exceptionError(res.ExceptionDetails)
			}
			list = res.Result
		} else {
			res, err := cdp.Call(ctx, p.t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
				FunctionDeclaration: `function(parts) { if (!this.isConnected) throw new Error("element is not attached to the DOM"); return __metronome.all(parts, this); }`,
				ObjectID:            within.id,
				Arguments:           []*runtime.CallArgument{{Value: partsJSON}},
			})
			if err != nil {
				return nil, err
			}
			if res.ExceptionDetails != nil {
				return nil, exceptionError(res.ExceptionDetails)
			}
			list = res.Result
		}
		props, err := cdp.Call(ctx, p.t, runtime.GetProperties, runtime.GetPropertiesParams{ObjectID: list.ObjectID, OwnProperties: ptr(true)})
		if err != nil {
			return nil, err
		}
		var ids []runtime.RemoteObjectID
		for _, pr := range props.Result {
			if pr.Value != nil && pr.Value.ObjectID != "" && pr.Name != "__proto__" && pr.Value.Subtype == "node" {
				ids = append(ids, pr.Value.ObjectID)
			}
		}
		return func(rt *sobek.Runtime) (any, error) {
			if !all {
				if len(ids) == 0 {
					return sobek.Null(), nil
				}
				return b.handleObject(&handle{p: p, id: ids[0]}), nil
			}
			out := make([]any, len(ids))
			for i, id := range ids {
				out[i] = b.handleObject(&handle{p: p, id: id})
			}
			return rt.ToValue(out), nil
		}, nil
	})
}

// locatorObject is the script's Locator: parts resolved anew each time
// it acts.
func (b *vuBrowser) locatorObject(p *page, parts []part, desc string, touch func()) *sobek.Object {
	rt := b.vu.Runtime()
	loc := func(ps []part, d string) *sobek.Object { return b.locatorObject(p, ps, d, touch) }
	m := b.elementMethods(elementRef{p: p, parts: parts, desc: desc}, touch)
	for name, f := range getBy(rt, parts, desc, loc) {
		m[name] = f
	}
	nth := func(i int64, d string) *sobek.Object {
		return loc(append(append([]part{}, parts...), part{Kind: "nth", Value: i}), desc+" >> "+d)
	}
	m["locator"] = func(c sobek.FunctionCall) sobek.Value {
		sel := jsmod.String(rt, c.Argument(0), "selector")
		return loc(append(append([]part{}, parts...), parseSelector(sel)...), desc+" >> "+sel)
	}
	m["nth"] = func(c sobek.FunctionCall) sobek.Value {
		i := c.Argument(0).ToInteger()
		return nth(i, fmt.Sprintf("nth=%d", i))
	}
	m["first"] = func(sobek.FunctionCall) sobek.Value { return nth(0, "nth=0") }
	m["last"] = func(sobek.FunctionCall) sobek.Value { return nth(-1, "nth=-1") }
	m["count"] = func(c sobek.FunctionCall) sobek.Value {
		partsJSON, _ := json.Marshal(parts)
		return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
			return p.evaluate(ctx, `globalThis.__metronome ? __metronome.all(`+string(partsJSON)+`).length : 0`, false, nil)
		})
	}
	m["waitFor"] = func(c sobek.FunctionCall) sobek.Value {
		return b.waitFor(elementRef{p: p, parts: parts, desc: desc}, c.Argument(0), p.bc.actionTimeout(), "waiting for", false)
	}
	return b.object(m)
}

// handleObject is the script's ElementHandle.
func (b *vuBrowser) handleObject(h *handle) *sobek.Object {
	m := b.elementMethods(elementRef{p: h.p, h: h, desc: "element"}, func() {})
	rt := b.vu.Runtime()
	m["$"] = func(c sobek.FunctionCall) sobek.Value {
		return b.query(h.p, h, parseSelector(jsmod.String(rt, c.Argument(0), "selector")), false)
	}
	m["$$"] = func(c sobek.FunctionCall) sobek.Value {
		return b.query(h.p, h, parseSelector(jsmod.String(rt, c.Argument(0), "selector")), true)
	}
	return b.object(m)
}

// waitFor waits for an element's state: "visible" (default), "attached",
// "hidden" or "detached". page.waitForSelector resolves with the element.
func (b *vuBrowser) waitFor(r elementRef, opts sobek.Value, def time.Duration, verb string, withHandle bool) sobek.Value {
	state := stringOption(opts, "state", "visible")
	to := timeoutOf(opts, def)
	accept := map[string]func(outcome) bool{
		"attached": found,
		"detached": func(o outcome) bool { return !o.Found },
		"visible":  truthy,
		"hidden":   func(o outcome) bool { return !o.Found || string(o.Value) == "false" },
	}[state]
	if accept == nil {
		return jsmod.Settled(b.vu.Runtime(), nil, &jsmod.Bare{Err: fmt.Errorf("invalid state %q: must be one of attached, detached, visible, hidden", state)})
	}
	return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
		if _, err := r.wait(ctx, to, verb, `(el) => __metronome.visible(el)`, nil, accept); err != nil {
			return nil, err
		}
		if !withHandle || state == "detached" || state == "hidden" {
			return func(*sobek.Runtime) (any, error) { return sobek.Null(), nil }, nil
		}
		return nil, nil
	})
}

// keyNames are the names k6's press takes for keys that are not
// characters.
var keyNames = map[string]string{
	"Enter": kb.Enter, "Tab": kb.Tab, "Backspace": kb.Backspace, "Escape": kb.Escape,
	"ArrowUp": kb.ArrowUp, "ArrowDown": kb.ArrowDown, "ArrowLeft": kb.ArrowLeft, "ArrowRight": kb.ArrowRight,
	"Delete": kb.Delete, "Home": kb.Home, "End": kb.End, "PageUp": kb.PageUp, "PageDown": kb.PageDown,
	"Space": " ",
}

// pressKeys turns "Control+Shift+A" into the key and its modifiers.
func pressKeys(combo string) (string, []chromedp.Modifier) {
	parts := strings.Split(combo, "+")
	key := parts[len(parts)-1]
	if key == "" && len(parts) > 1 { // "Control++"
		key = "+"
	}
	var mods []chromedp.Modifier
	for _, m := range parts[:len(parts)-1] {
		switch m {
		case "Control":
			mods = append(mods, chromedp.ModifierCtrl)
		case "Shift":
			mods = append(mods, chromedp.ModifierShift)
		case "Alt":
			mods = append(mods, chromedp.ModifierAlt)
		case "Meta":
			mods = append(mods, chromedp.ModifierMeta)
		}
	}
	if k, ok := keyNames[key]; ok {
		key = k
	}
	return key, mods
}

// elementMethods are what a Locator and an ElementHandle share.
func (b *vuBrowser) elementMethods(r elementRef, touch func()) methods {
	rt := b.vu.Runtime()
	p := r.p
	// value waits for the element and gives fn's result.
	value := func(verb, fn string, arg any, opts sobek.Value) sobek.Value {
		to := timeoutOf(opts, p.bc.actionTimeout())
		return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
			o, err := r.wait(ctx, to, verb, fn, arg, found)
			if err != nil {
				return nil, err
			}
			return jsonValue(string(o.Value)), nil
		})
	}
	// now gives fn's result at once, false when there is no element.
	now := func(fn string) sobek.Value {
		return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
			o, err := r.do(ctx, fn, nil)
			if err != nil {
				return nil, err
			}
			if !o.Found {
				return func(*sobek.Runtime) (any, error) { return false, nil }, nil
			}
			return jsonValue(string(o.Value)), nil
		})
	}
	action := func(opts sobek.Value, f func(ctx context.Context, to time.Duration) error) sobek.Value {
		touch()
		to := timeoutOf(opts, p.bc.actionTimeout())
		return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
			return nil, f(ctx, to)
		})
	}
	setChecked := func(c sobek.FunctionCall, want bool, verb string) sobek.Value {
		return action(c.Argument(0), func(ctx context.Context, to time.Duration) error {
			o, err := r.wait(ctx, to, verb, `(el) => !!el.checked`, nil, found)
			if err != nil {
				return err
			}
			if (string(o.Value) == "true") == want {
				return nil
			}
			if err := r.click(ctx, to, verb, 1); err != nil {
				return err
			}
			o, err = r.do(ctx, `(el) => !!el.checked`, nil)
			if err == nil && (string(o.Value) == "true") != want {
				err = fmt.Errorf("%s %q: clicking the element did not change its state", verb, r.desc)
			}
			return err
		})
	}
	return methods{
		"click": func(c sobek.FunctionCall) sobek.Value {
			return action(c.Argument(0), func(ctx context.Context, to time.Duration) error { return r.click(ctx, to, "clicking on", 1) })
		},
		"dblclick": func(c sobek.FunctionCall) sobek.Value {
			return action(c.Argument(0), func(ctx context.Context, to time.Duration) error {
				return r.click(ctx, to, "double clicking on", 2)
			})
		},
		"hover": func(c sobek.FunctionCall) sobek.Value {
			return action(c.Argument(0), func(ctx context.Context, to time.Duration) error { return r.hover(ctx, to) })
		},
		"focus": func(c sobek.FunctionCall) sobek.Value {
			return action(c.Argument(0), func(ctx context.Context, to time.Duration) error {
				_, err := r.wait(ctx, to, "focusing", `(el) => { el.focus(); return true; }`, nil, found)
				return err
			})
		},
		"fill": func(c sobek.FunctionCall) sobek.Value {
			text := jsmod.String(rt, c.Argument(0), "value")
			return action(c.Argument(1), func(ctx context.Context, to time.Duration) error { return r.fill(ctx, to, text) })
		},
		"type": func(c sobek.FunctionCall) sobek.Value {
			text := jsmod.String(rt, c.Argument(0), "text")
			return action(c.Argument(1), func(ctx context.Context, to time.Duration) error { return r.typeText(ctx, to, text) })
		},
		"press": func(c sobek.FunctionCall) sobek.Value {
			key, mods := pressKeys(jsmod.String(rt, c.Argument(0), "key"))
			return action(c.Argument(1), func(ctx context.Context, to time.Duration) error {
				if _, err := r.wait(ctx, to, "pressing", `(el) => { el.focus(); return true; }`, nil, found); err != nil {
					return err
				}
				err := p.t.keys(ctx, key, chromedp.KeyModifiers(mods...))
				return err
			})
		},
		"check":   func(c sobek.FunctionCall) sobek.Value { return setChecked(c, true, "checking") },
		"uncheck": func(c sobek.FunctionCall) sobek.Value { return setChecked(c, false, "unchecking") },
		"selectOption": func(c sobek.FunctionCall) sobek.Value {
			var want []any
			switch v := c.Argument(0).Export().(type) {
			case []any:
				want = v
			default:
				want = []any{v}
			}
			touch()
			to := timeoutOf(c.Argument(1), p.bc.actionTimeout())
			return b.async(func(ctx context.Context) (func(*sobek.Runtime) (any, error), error) {
				o, err := r.wait(ctx, to, "selecting options", `(el, want) => {
					const match = (opt, w) => typeof w === "object" && w !== null
						? (w.value === undefined || opt.value === w.value) && (w.label === undefined || opt.label === w.label) && (w.index === undefined || opt.index === w.index)
						: opt.value === String(w) || opt.label === String(w);
					const opts = Array.from(el.options || []);
					if (el.multiple) opts.forEach((opt) => { opt.selected = want.some((w) => match(opt, w)); });
					else el.selectedIndex = opts.findIndex((opt) => want.some((w) => match(opt, w)));
					const picked = Array.from(el.selectedOptions || []).map((opt) => opt.value);
					el.dispatchEvent(new Event("input", {bubbles: true}));
					el.dispatchEvent(new Event("change", {bubbles: true}));
					return picked;
				}`, want, found)
				if err != nil {
					return nil, err
				}
				return jsonValue(string(o.Value)), nil
			})
		},
		"textContent": func(c sobek.FunctionCall) sobek.Value {
			return value("getting text content of", `(el) => el.textContent`, nil, c.Argument(0))
		},
		"innerText": func(c sobek.FunctionCall) sobek.Value {
			return value("getting inner text of", `(el) => el.innerText`, nil, c.Argument(0))
		},
		"innerHTML": func(c sobek.FunctionCall) sobek.Value {
			return value("getting inner HTML of", `(el) => el.innerHTML`, nil, c.Argument(0))
		},
		"inputValue": func(c sobek.FunctionCall) sobek.Value {
			return value("getting input value of", `(el) => { if (!("value" in el)) throw new Error("Node is not an <input>, <textarea> or <select> element"); return el.value; }`, nil, c.Argument(0))
		},
		"getAttribute": func(c sobek.FunctionCall) sobek.Value {
			name := jsmod.String(rt, c.Argument(0), "name")
			return value("getting attribute of", `(el, name) => el.getAttribute(name)`, name, c.Argument(1))
		},
		"isChecked": func(c sobek.FunctionCall) sobek.Value {
			return value("checking state of", `(el) => !!el.checked`, nil, c.Argument(0))
		},
		"isVisible":  func(sobek.FunctionCall) sobek.Value { return now(`(el) => __metronome.visible(el)`) },
		"isHidden":   func(sobek.FunctionCall) sobek.Value { return now(`(el) => !__metronome.visible(el)`) },
		"isEnabled":  func(sobek.FunctionCall) sobek.Value { return now(`(el) => !el.disabled`) },
		"isDisabled": func(sobek.FunctionCall) sobek.Value { return now(`(el) => !!el.disabled`) },
	}
}

// navigate is page.goto: the page loads url, and the wait for it is the
// user's, so it records corrected_latency with the document's tags; a
// navigation cut off by the iteration's interruption is charged up to the
// cut (jsmod.AsyncMeasured, as a request of k6/http is).
func (b *vuBrowser) navigate(p *page, h *tagHolder, url, waitUntil string, to time.Duration) sobek.Value {
	st := b.vu.State()
	iter := b.vu.Context()
	return jsmod.AsyncMeasured(b.vu, func() (func(), func(*sobek.Runtime) (any, error)) {
		ctx, cancel := context.WithTimeout(context.Background(), to)
		stop := context.AfterFunc(iter, cancel)
		start := time.Now()
		res, err := p.navigate(ctx, url, waitUntil)
		end := time.Now()
		cut := err != nil && iter.Err() != nil
		timedOut := err != nil && !cut && ctx.Err() == context.DeadlineExceeded
		stop()
		cancel()
		record := func() {
			if st == nil || b.vu.State() != st {
				return
			}
			base, sys := h.get()
			tags := responseTags(base, sys, "GET", url, string(network.ResourceTypeDocument), res.resp)
			if cut {
				jsmod.RecordInterrupted(st, tags, start, end)
				return
			}
			jsmod.RecordLatency(st, tags, end, end.Sub(start))
		}
		value := func(rt *sobek.Runtime) (any, error) {
			switch {
			case timedOut:
				return nil, &jsmod.Bare{Err: fmt.Errorf("navigating page: navigating frame to %q: navigating to %q: timed out after %s", url, url, to)}
			case err != nil:
				return nil, &jsmod.Bare{Err: fmt.Errorf("navigating page: navigating frame to %q: %w", url, err)}
			case res.resp == nil:
				return sobek.Null(), nil
			}
			return b.responseObject(res.resp), nil
		}
		return record, value
	})
}
