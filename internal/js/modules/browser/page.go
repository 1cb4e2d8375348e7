package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/grafana/sobek"
)

//go:embed inject.js
var injectJS string

// vitalBinding is the function the in-page collector calls with a vital.
const vitalBinding = "__metronomeVital"

// errDetached is k6's error for an element handle whose element left the
// document.
var errDetached = errors.New("element is not attached to the DOM")

// page is one tab: its chromedp context and what its events told.
type page struct {
	ctx    context.Context
	cancel context.CancelFunc
	t      *tab
	net    *netTracker
	bc     *bcontext

	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever a field below changes
	navGen  int           // main-frame navigations so far
	dclGen  int           // the navGen whose DOMContentLoaded fired
	loadGen int           // the navGen whose load fired
	url     string
	mainID  cdp.FrameID
	docResp map[cdp.LoaderID]*network.Response
	closed  bool
	obj     *sobek.Object // the script's Page, made on the VU goroutine
}

// newPage opens a tab in the browser context bc.
func newPage(bc *bcontext, net *netTracker) (*page, error) {
	p := &page{bc: bc, net: net, changed: make(chan struct{}), url: "about:blank", docResp: map[cdp.LoaderID]*network.Response{}}
	ctx, cancel := chromedp.NewContext(bc.root, chromedp.WithExistingBrowserContext(bc.id), chromedp.WithListener(p.onEvent))
	p.ctx, p.cancel = ctx, cancel
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, err
	}
	p.t = newTab(chromedp.FromContext(ctx).Target)
	setup := func() error {
		if _, err := cdp.Call(ctx, p.t, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		chromium.mu.Lock()
		ua := chromium.userAgent
		chromium.mu.Unlock()
		if ua != "" {
			if _, err := cdp.Call(ctx, p.t, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: "en-US"}); err != nil {
				return err
			}
		}
		if _, err := cdp.Call(ctx, p.t, runtime.AddBinding, runtime.AddBindingParams{Name: vitalBinding}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, p.t, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: injectJS}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, p.t, runtime.Evaluate, runtime.EvaluateParams{Expression: injectJS})
		return err
	}
	if err := setup(); err != nil {
		cancel()
		return nil, err
	}
	return p, nil
}

// notify wakes whoever waits for a change; p.mu is held.
func (p *page) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// onEvent runs on the goroutine that reads the tab's events: it must
// return fast and run no command.
func (p *page) onEvent(ev any) {
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		p.net.onRequest(e)
	case *network.EventRequestWillBeSentExtraInfo:
		p.net.onExtraInfo(e)
	case *network.EventResponseReceived:
		p.net.onResponse(e)
		if e.Type == network.ResourceTypeDocument {
			p.mu.Lock()
			p.docResp[e.LoaderID] = e.Response
			p.mu.Unlock()
		}
	case *network.EventLoadingFinished:
		p.net.onEnd(e.RequestID, float64(e.Timestamp), e.EncodedDataLength)
	case *network.EventLoadingFailed:
		p.net.onEnd(e.RequestID, float64(e.Timestamp), 0)
	case *runtime.EventBindingCalled:
		if e.Name == vitalBinding {
			p.net.onVital(e.Payload)
		}
	case *cdppage.EventFrameNavigated:
		if e.Frame != nil && e.Frame.ParentID == "" {
			p.mu.Lock()
			p.navGen++
			p.mainID = e.Frame.ID
			p.url = e.Frame.URL + e.Frame.URLFragment
			p.notify()
			p.mu.Unlock()
		}
	case *cdppage.EventNavigatedWithinDocument:
		p.mu.Lock()
		if e.FrameID == p.mainID {
			p.url = e.URL
			p.notify()
		}
		p.mu.Unlock()
	case *cdppage.EventDomContentEventFired:
		p.mu.Lock()
		p.dclGen = p.navGen
		p.notify()
		p.mu.Unlock()
	case *inspector.EventTargetCrashed:
		p.t.crash()
		p.mu.Lock()
		p.notify()
		p.mu.Unlock()
	case *cdppage.EventLoadEventFired:
		p.mu.Lock()
		p.loadGen = p.navGen
		p.notify()
		p.mu.Unlock()
	}
}

// URL is the main frame's URL.
func (p *page) URL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.url
}

// waitUntil waits until cond, checked under p.mu, holds.
func (p *page) waitUntil(ctx context.Context, cond func() bool) error {
	for {
		p.mu.Lock()
		ok, ch := cond(), p.changed
		p.mu.Unlock()
		if ok {
			return nil
		}
		if p.t.crashed() {
			return errTargetCrashed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitLoadState waits until navigation gen reached state: "load",
// "domcontentloaded" or "networkidle" (load, then no request for 500 ms).
func (p *page) waitLoadState(ctx context.Context, gen int, state string) error {
	switch state {
	case "", "load":
		return p.waitUntil(ctx, func() bool { return p.loadGen >= gen })
	case "domcontentloaded":
		return p.waitUntil(ctx, func() bool { return p.dclGen >= gen || p.loadGen >= gen })
	case "networkidle":
		if err := p.waitUntil(ctx, func() bool { return p.loadGen >= gen }); err != nil {
			return err
		}
		const quiet = 500 * time.Millisecond
		for {
			if p.t.crashed() {
				return errTargetCrashed
			}
			idle := p.net.idleSince()
			if idle >= quiet {
				return nil
			}
			wait := quiet - idle
			if idle == 0 {
				wait = 50 * time.Millisecond
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return fmt.Errorf("invalid waitUntil %q: must be one of load, domcontentloaded, networkidle", state)
}

// flushVitals makes the in-page collector report what it holds back
// until the page goes: LCP, CLS, INP.
func (p *page) flushVitals(ctx context.Context) {
	_, _ = cdp.Call(ctx, p.t, runtime.Evaluate, runtime.EvaluateParams{Expression: `globalThis.__metronome && __metronome.leave()`, AwaitPromise: ptr(true)})
}

// navResult is what a navigation answered: the document's response, nil
// for a same-document navigation.
type navResult struct {
	resp *network.Response
}

// navigate loads url and waits for waitUntil.
func (p *page) navigate(ctx context.Context, url, waitUntil string) (navResult, error) {
	p.flushVitals(ctx)
	p.mu.Lock()
	gen := p.navGen + 1
	p.mu.Unlock()
	res, err := cdp.Call(ctx, p.t, cdppage.Navigate, cdppage.NavigateParams{URL: url})
	if err != nil {
		return navResult{}, err
	}
	if res.ErrorText != "" {
		return navResult{}, errors.New(res.ErrorText)
	}
	if res.LoaderID == "" {
		// A same-document navigation: nothing loads.
		return navResult{}, nil
	}
	if err := p.waitLoadState(ctx, gen, waitUntil); err != nil {
		return navResult{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return navResult{resp: p.docResp[res.LoaderID]}, nil
}

// close closes the tab after the vitals were reported.
func (p *page) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(p.ctx, 2*time.Second)
	p.flushVitals(ctx)
	cancel()
	p.cancel()
}

func (p *page) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// part is one step of a locator's selector chain, as the in-page engine
// takes it.
type part struct {
	Kind    string `json:"kind"`
	Value   any    `json:"value"`
	Name    any    `json:"name,omitempty"`
	Exact   bool   `json:"exact,omitempty"`
	Checked *bool  `json:"checked,omitempty"`
	Level   *int64 `json:"level,omitempty"`
}

// parseSelector turns a selector as scripts write it into parts: CSS by
// default, "css=", "xpath=" (or a leading "//"), "text=" (quoted: exact)
// and "nth=", chained with " >> ".
func parseSelector(sel string) []part {
	var parts []part
	for _, s := range strings.Split(sel, " >> ") {
		s = strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(s, "xpath="):
			parts = append(parts, part{Kind: "xpath", Value: s[len("xpath="):]})
		case strings.HasPrefix(s, "//") || strings.HasPrefix(s, ".."):
			parts = append(parts, part{Kind: "xpath", Value: s})
		case strings.HasPrefix(s, "text="):
			parts = append(parts, textPart(s[len("text="):]))
		case strings.HasPrefix(s, "css="):
			parts = append(parts, part{Kind: "css", Value: s[len("css="):]})
		case strings.HasPrefix(s, "nth="):
			var n int64
			fmt.Sscan(s[len("nth="):], &n)
			parts = append(parts, part{Kind: "nth", Value: n})
		default:
			parts = append(parts, part{Kind: "css", Value: s})
		}
	}
	return parts
}

// textPart is a text selector: quoted text matches exactly, other text
// as a case-insensitive substring.
func textPart(s string) part {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return part{Kind: "text", Value: s[1 : len(s)-1], Exact: true}
	}
	return part{Kind: "text", Value: s}
}

// handle is an element a script holds (an ElementHandle): a remote
// object of the page.
type handle struct {
	p  *page
	id runtime.RemoteObjectID
}

// elementRef is what an element operation acts on: the first element a
// locator's parts find, or a handle's element.
type elementRef struct {
	p     *page
	parts []part
	h     *handle
	desc  string // the selector as the script wrote it, for errors
}

// outcome is what an in-page operation answered.
type outcome struct {
	Found    bool            `json:"found"`
	Detached bool            `json:"detached"`
	Value    json.RawMessage `json:"v"`
}

// do runs fn, the source of a JavaScript function (el, arg) => value, on
// the element once.
func (r elementRef) do(ctx context.Context, fn string, arg any) (outcome, error) {
	argJSON, err := json.Marshal(arg)
	if err != nil {
		return outcome{}, err
	}
	var res *runtime.RemoteObject
	var exc *runtime.ExceptionDetails
	if r.h != nil {
		out, err := cdp.Call(ctx, r.p.t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: `async function(arg) { if (!this.isConnected) return {found: false, detached: true}; return {found: true, v: await (` + fn + `)(this, arg)}; }`,
			ObjectID:            r.h.id,
			Arguments:           []*runtime.CallArgument{{Value: argJSON}},
			ReturnByValue:       ptr(true),
			AwaitPromise:        ptr(true),
		})
		if err != nil {
			return outcome{}, err
		}
		res, exc = out.Result, out.ExceptionDetails
	} else {
		partsJSON, err := json.Marshal(r.parts)
		if err != nil {
			return outcome{}, err
		}
		expr := `(async () => { const el = globalThis.__metronome && __metronome.all(` + string(partsJSON) + `)[0]; if (!el) return {found: false}; return {found: true, v: await (` + fn + `)(el, ` + string(argJSON) + `)}; })()`
		out, err := cdp.Call(ctx, r.p.t, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: ptr(true), AwaitPromise: ptr(true)})
		if err != nil {
			return outcome{}, err
		}
		res, exc = out.Result, out.ExceptionDetails
	}
	if exc != nil {
		return outcome{}, exceptionError(exc)
	}
	var o outcome
	if res != nil && len(res.Value) > 0 {
		if err := json.Unmarshal(res.Value, &o); err != nil {
			return outcome{}, err
		}
	}
	if o.Detached {
		return o, errDetached
	}
	return o, nil
}

// exceptionError is the error of a script's exception in the page.
func exceptionError(e *runtime.ExceptionDetails) error {
	if e.Exception != nil && e.Exception.Description != "" {
		return errors.New(strings.SplitN(e.Exception.Description, "\n", 2)[0])
	}
	return errors.New(e.Text)
}

// pollInterval is how often an operation that waits for its element looks
// again.
const pollInterval = 50 * time.Millisecond

// wait runs fn on the element until accept(value) holds, and fails with
// k6's words ("<verb> "<selector>": timed out after 500ms") when timeout
// passes first. A handle's element is never waited for.
func (r elementRef) wait(ctx context.Context, timeout time.Duration, verb, fn string, arg any, accept func(outcome) bool) (outcome, error) {
	deadline := time.Now().Add(timeout)
	for {
		o, err := r.do(ctx, fn, arg)
		if err != nil {
			if ctx.Err() != nil {
				return o, ctx.Err()
			}
			if r.h != nil && isContextLoss(err) {
				// The handle's document is gone with its elements.
				return o, fmt.Errorf("%s %q: %w", verb, r.desc, errDetached)
			}
			if !isContextLoss(err) {
				return o, fmt.Errorf("%s %q: %w", verb, r.desc, err)
			}
		} else if accept(o) {
			return o, nil
		}
		if r.h != nil && err == nil && !o.Found {
			return o, fmt.Errorf("%s %q: %w", verb, r.desc, errDetached)
		}
		if !time.Now().Before(deadline) {
			return o, fmt.Errorf("%s %q: timed out after %s", verb, r.desc, timeout)
		}
		select {
		case <-time.After(min(pollInterval, time.Until(deadline))):
		case <-ctx.Done():
			return o, ctx.Err()
		}
	}
}

// isContextLoss reports an error of an evaluation cut off by a navigation,
// which the next attempt retries.
func isContextLoss(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Execution context was destroyed") || strings.Contains(s, "Cannot find context") ||
		strings.Contains(s, "Inspected target navigated")
}

// found accepts an attached element.
func found(o outcome) bool { return o.Found }

// point is a place on the page, in CSS pixels of the viewport.
type point struct {
	X, Y    float64
	Visible bool
}

// actionPoint scrolls the element into view and gives its centre once it
// is visible.
const actionPoint = `(el) => { el.scrollIntoView({block: "center", inline: "center"}); const r = el.getBoundingClientRect(); return {X: r.x + r.width / 2, Y: r.y + r.height / 2, Visible: __metronome.visible(el)}; }`

func visiblePoint(o outcome) bool {
	if !o.Found {
		return false
	}
	var pt point
	return json.Unmarshal(o.Value, &pt) == nil && pt.Visible
}

// click waits for the element to be visible, then clicks its centre
// with the mouse, as a user does.
func (r elementRef) click(ctx context.Context, timeout time.Duration, verb string, clicks int64) error {
	o, err := r.wait(ctx, timeout, verb, actionPoint, nil, visiblePoint)
	if err != nil {
		return err
	}
	var pt point
	if err := json.Unmarshal(o.Value, &pt); err != nil {
		return err
	}
	return mouseClick(ctx, r.p.t, pt.X, pt.Y, clicks)
}

func mouseClick(ctx context.Context, t cdp.Session, x, y float64, clicks int64) error {
	if _, err := cdp.Call(ctx, t, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y}); err != nil {
		return err
	}
	for i := int64(1); i <= clicks; i++ {
		for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
			if _, err := cdp.Call(ctx, t, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: i}); err != nil {
				return err
			}
		}
	}
	return nil
}

// hover moves the mouse over the element's centre.
func (r elementRef) hover(ctx context.Context, timeout time.Duration) error {
	o, err := r.wait(ctx, timeout, "hovering", actionPoint, nil, visiblePoint)
	if err != nil {
		return err
	}
	var pt point
	if err := json.Unmarshal(o.Value, &pt); err != nil {
		return err
	}
	_, err = cdp.Call(ctx, r.p.t, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: pt.X, Y: pt.Y})
	return err
}

// focusEditable focuses a visible element and selects its text.
const focusEditable = `(el) => { if (!__metronome.visible(el)) return false; el.focus(); if (typeof el.select === "function") el.select(); else if (el.isContentEditable) { const r = document.createRange(); r.selectNodeContents(el); const s = getSelection(); s.removeAllRanges(); s.addRange(r); } return true; }`

func truthy(o outcome) bool { return o.Found && string(o.Value) == "true" }

// fill replaces the element's value with text, as typing it at once.
func (r elementRef) fill(ctx context.Context, timeout time.Duration, text string) error {
	if _, err := r.wait(ctx, timeout, "filling", focusEditable, nil, truthy); err != nil {
		return err
	}
	if text == "" {
		return r.p.t.keys(ctx, "\b")
	}
	_, err := cdp.Call(ctx, r.p.t, input.InsertText, input.InsertTextParams{Text: text})
	return err
}

// typeText focuses the element and types text key by key.
func (r elementRef) typeText(ctx context.Context, timeout time.Duration, text string) error {
	if _, err := r.wait(ctx, timeout, "typing", `(el) => { if (!__metronome.visible(el)) return false; el.focus(); return true; }`, nil, truthy); err != nil {
		return err
	}
	return r.p.t.keys(ctx, text)
}

func ptr[T any](v T) *T { return &v }
