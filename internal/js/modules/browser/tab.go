package browser

import (
	"context"
	"errors"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
)

// errTargetCrashed is k6's error for a page whose renderer process died
// (killed, out of memory): every command on the page fails with it, the
// ones already waiting for an answer included, since a dead renderer
// answers none.
var errTargetCrashed = errors.New("Target has crashed")

// tab is a page's DevTools session that stops waiting when the page's
// renderer crashes: Chromium tells so (Inspector.targetCrashed) and then
// leaves the commands sent to the tab unanswered for ever.
type tab struct {
	t     *chromedp.Target
	alive context.Context // ends when the renderer crashed
	crash func()          // marks the renderer dead, releasing the commands waiting on it
}

func newTab(t *chromedp.Target) *tab {
	alive, crash := context.WithCancel(context.Background())
	return &tab{t: t, alive: alive, crash: crash}
}

// crashed reports whether the renderer died.
func (s *tab) crashed() bool { return s.alive.Err() != nil }

// bind derives from ctx a context that ends when the renderer crashes;
// done releases it.
func (s *tab) bind(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.alive, func() { cancel(errTargetCrashed) })
	return ctx, func() { stop(); cancel(nil) }
}

// result turns the error of a command cut off by a crash into k6's.
func (s *tab) result(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errTargetCrashed) {
		return errTargetCrashed
	}
	return err
}

// Call runs a command on the tab, or fails with errTargetCrashed.
func (s *tab) Call(ctx context.Context, method string, params, result any) error {
	if s.crashed() {
		return errTargetCrashed
	}
	ctx, done := s.bind(ctx)
	defer done()
	return s.result(ctx, s.t.Call(ctx, method, params, result))
}

// Subscribe is the tab's own.
func (s *tab) Subscribe(method string) (<-chan jsonv2.Value, func()) {
	return s.t.Subscribe(method)
}

// keys types keys on the tab (chromedp's KeyEvent), or fails with
// errTargetCrashed.
func (s *tab) keys(ctx context.Context, keys string, opts ...chromedp.KeyOption) error {
	if s.crashed() {
		return errTargetCrashed
	}
	ctx, done := s.bind(ctx)
	defer done()
	_, err := chromedp.KeyEvent(keys, opts...)(ctx, s.t)
	return s.result(ctx, err)
}

var _ cdp.Session = (*tab)(nil)
