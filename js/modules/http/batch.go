package http

import (
	"net/http"
	"sync"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// jsBatch is http.batch(requests): requests is an array or an object whose
// values are a URL, an array [method, url, body, params] or an object
// {method, url, body, params}. They run concurrently within the batch and
// batchPerHost limits; the responses come back in the same shape.
func (in *instance) jsBatch(c sobek.FunctionCall) sobek.Value {
	st := in.state()
	o, ok := c.Argument(0).(*sobek.Object)
	if !ok {
		jsmod.ThrowTypeError(in.rt, "http.batch takes an array or an object of requests, not %s", jsmod.Describe(c.Argument(0)))
	}
	isArray := o.ClassName() == "Array"
	var keys []string
	if isArray {
		n := o.Get("length").ToInteger()
		keys = make([]string, n)
		for i := range keys {
			keys[i] = itoa(int64(i))
		}
	} else {
		keys = o.Keys()
	}
	reqs := make([]*request, len(keys))
	for i, k := range keys {
		reqs[i] = in.batchItem(st, k, o.Get(k))
	}

	results := runBatch(in, st, reqs)

	var firstErr *hop
	vals := make([]sobek.Value, len(results))
	for i, res := range results {
		in.emit(st, res)
		if h := res.failure(); h != nil && res.req.throw && firstErr == nil {
			firstErr = h
		}
		vals[i] = in.newResponse(res)
	}
	if firstErr != nil {
		jsmod.ThrowGoError(in.rt, "%s", errorText(firstErr.err))
	}
	if isArray {
		items := make([]any, len(vals))
		for i, v := range vals {
			items[i] = v
		}
		return in.rt.NewArray(items...)
	}
	out := in.rt.NewObject()
	for i, k := range keys {
		_ = out.Set(k, vals[i])
	}
	return out
}

// batchItem parses one element of a batch.
func (in *instance) batchItem(st *modules.State, key string, v sobek.Value) *request {
	o, ok := v.(*sobek.Object)
	if !ok || o.ExportType() == taggedURLType {
		return in.parse(st, http.MethodGet, v, nil, nil)
	}
	if o.ClassName() == "Array" {
		n := o.Get("length").ToInteger()
		if n < 2 {
			jsmod.ThrowTypeError(in.rt, "http.batch: request %s must be [method, url, body?, params?]", key)
		}
		arg := func(i int64) sobek.Value {
			if i < n {
				return o.Get(itoa(i))
			}
			return sobek.Undefined()
		}
		return in.parse(st, in.method(arg(0)), arg(1), arg(2), arg(3))
	}
	u := o.Get("url")
	if u == nil || sobek.IsUndefined(u) {
		jsmod.ThrowTypeError(in.rt, "http.batch: request %s has no url", key)
	}
	method := http.MethodGet
	if m := o.Get("method"); m != nil && !sobek.IsUndefined(m) && !sobek.IsNull(m) {
		method = in.method(m)
	}
	return in.parse(st, method, u, o.Get("body"), o.Get("params"))
}

// runBatch runs reqs concurrently, at most d.batch at a time overall and
// d.batchPerHost per host (0 means no limit), and returns their results in
// order.
func runBatch(in *instance, st *modules.State, reqs []*request) []*result {
	results := make([]*result, len(reqs))
	ctx := in.vu.Context()
	rt := in.roundTripper(st)
	var all chan struct{}
	if n := in.d.batch; n > 0 {
		all = make(chan struct{}, n)
	}
	perHost := map[string]chan struct{}{}
	var wg sync.WaitGroup
	for i, r := range reqs {
		if r.url.u == nil {
			results[i] = in.execute(ctx, rt, r, nil)
			continue
		}
		var host chan struct{}
		if n := in.d.batchPerHost; n > 0 {
			host = perHost[r.url.u.Host]
			if host == nil {
				host = make(chan struct{}, n)
				perHost[r.url.u.Host] = host
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if host != nil {
				host <- struct{}{}
				defer func() { <-host }()
			}
			if all != nil {
				all <- struct{}{}
				defer func() { <-all }()
			}
			results[i] = do(ctx, rt, r, nil)
		}()
	}
	wg.Wait()
	return results
}

// jsAsyncRequest is http.asyncRequest(method, url, body?, params?): the
// request runs on its own goroutine and the returned promise settles on
// the VU's event loop.
func (in *instance) jsAsyncRequest(c sobek.FunctionCall) sobek.Value {
	st := in.state()
	r := in.parse(st, in.method(c.Argument(0)), c.Argument(1), c.Argument(2), c.Argument(3))
	p := jsmod.NewPromise(in.vu)
	ctx := in.vu.Context()
	rt := in.roundTripper(st)
	go func() {
		res := in.execute(ctx, rt, r, nil)
		p.Resolve(func(*sobek.Runtime) (any, error) {
			cur := in.vu.State()
			if cur == nil {
				cur = st
			}
			in.prepare(cur)
			in.emit(cur, res)
			if h := res.failure(); h != nil && r.throw {
				return nil, jsmod.Errorf(jsmod.GoError, "%s", errorText(h.err))
			}
			return in.newResponse(res), nil
		})
	}()
	return p.Value()
}
