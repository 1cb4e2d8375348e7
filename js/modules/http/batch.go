package http

import (
	"net/http"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/internal/httpclient"
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
	calls := make([]*call, len(keys))
	reqs := make([]*httpclient.Request, len(keys))
	for i, k := range keys {
		calls[i] = in.batchItem(st, k, o.Get(k))
		reqs[i] = &calls[i].req
		if calls[i].req.Refused != nil {
			return in.abortBatch(st, isArray, keys, calls[:i+1])
		}
	}

	httpclient.Batch(in.vu.Context(), in.roundTripper(st), reqs, in.d.batch, in.d.batchPerHost)

	failed := ""
	vals := make([]sobek.Value, len(calls))
	for i, c := range calls {
		in.emit(st, c)
		if failed == "" {
			failed = in.thrown(c)
		}
		vals[i] = in.newResponse(c)
	}
	if failed != "" {
		jsmod.ThrowGoError(in.rt, "%s", failed)
	}
	return in.batchResult(isArray, keys, vals)
}

// abortBatch ends a batch whose last parsed request has a URL that did
// not parse, as k6 does: nothing is sent, and the throw option throws
// the URL's error; without it, the result holds an empty response for
// each request parsed before, the failed request's, and null for the
// others (an object result leaves them out).
func (in *instance) abortBatch(st *modules.State, isArray bool, keys []string, calls []*call) sobek.Value {
	bad := calls[len(calls)-1]
	httpclient.Do(in.vu.Context(), nil, &bad.req, nil)
	text := httpclient.ErrorText(bad.req.Refused)
	if in.d.throw {
		jsmod.ThrowGoError(in.rt, "%s", text)
	}
	if st.Logf != nil {
		st.Logf("A batch request failed: %s", text)
	}
	vals := make([]sobek.Value, len(keys))
	for i, c := range calls {
		if c != bad {
			// Unsent, it is k6's empty response: no URL, no error.
			c.target = &target{}
			c.req.URL = &c.target.Target
			c.req.Result().Hops = []httpclient.Hop{{URL: c.req.URL}}
		}
		vals[i] = in.newResponse(c)
	}
	if !isArray {
		keys, vals = keys[:len(calls)], vals[:len(calls)]
	}
	for i := len(calls); i < len(vals); i++ {
		vals[i] = sobek.Null()
	}
	return in.batchResult(isArray, keys, vals)
}

// batchResult is the batch's responses in the shape of its argument.
func (in *instance) batchResult(isArray bool, keys []string, vals []sobek.Value) sobek.Value {
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
func (in *instance) batchItem(st *modules.State, key string, v sobek.Value) *call {
	o, ok := v.(*sobek.Object)
	if !ok || o.ExportType() == taggedURLType {
		return in.parse(st, new(call), http.MethodGet, v, nil, nil)
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
		return in.parse(st, new(call), in.method(arg(0)), arg(1), arg(2), arg(3))
	}
	u := o.Get("url")
	if u == nil || sobek.IsUndefined(u) {
		jsmod.ThrowTypeError(in.rt, "http.batch: request %s has no url", key)
	}
	method := http.MethodGet
	if m := o.Get("method"); m != nil && !sobek.IsUndefined(m) && !sobek.IsNull(m) {
		method = in.method(m)
	}
	return in.parse(st, new(call), method, u, o.Get("body"), o.Get("params"))
}

// jsAsyncRequest is http.asyncRequest(method, url, body?, params?): the
// request runs on its own goroutine and the returned promise settles on
// the VU's event loop. Its samples are recorded even when the iteration is
// interrupted before the promise settles (jsmod.AsyncMeasured).
func (in *instance) jsAsyncRequest(c sobek.FunctionCall) sobek.Value {
	st := in.state()
	call := in.parse(st, new(call), in.method(c.Argument(0)), c.Argument(1), c.Argument(2), c.Argument(3))
	ctx := in.vu.Context()
	rt := in.roundTripper(st)
	return jsmod.AsyncMeasured(in.vu, func() (func(), func(*sobek.Runtime) (any, error)) {
		httpclient.Do(ctx, rt, &call.req, nil)
		record := func() {
			cur := in.vu.State()
			if cur == nil {
				cur = st
			}
			in.prepare(cur)
			in.emit(cur, call)
		}
		return record, func(*sobek.Runtime) (any, error) {
			if failed := in.thrown(call); failed != "" {
				return nil, jsmod.Errorf(jsmod.GoError, "%s", failed)
			}
			return in.newResponse(call), nil
		}
	})
}
