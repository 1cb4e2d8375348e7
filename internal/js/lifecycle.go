package js

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/metrics"
)

// Setup runs setup() in a service VU (id 0) if the script exports it and
// returns its result as JSON, nil when it returned nothing. The VUs get the
// result as their exec functions' argument. The engine enforces
// setupTimeout through ctx.
func (s *Script) Setup(ctx context.Context, rec metrics.Recorder) (json.RawMessage, error) {
	if !s.exported["setup"] {
		s.SetSetupData(nil)
		return nil, nil
	}
	v, err := s.newVU(ctx, 0, rec)
	if err != nil {
		return nil, err
	}
	ret, err := v.lifecycle(ctx, "setup", nil)
	if err != nil {
		return nil, s.lifecycleError("setup", ctx, err)
	}
	var data json.RawMessage
	if !sobek.IsUndefined(ret) {
		str, err := setupJSON(v.rt, ret)
		if err != nil {
			return nil, exitcode.Errorf(exitcode.ScriptException, "setup() returned a value that cannot be turned into JSON: %s", s.describe(err))
		}
		if str != "" {
			data = json.RawMessage(str)
		}
	}
	s.SetSetupData(data)
	return data, nil
}

// setupJSON encodes setup()'s result the way k6 hands it on: k6 exports
// the value to Go and marshals that, so a Date becomes Go's RFC 3339 time
// (no trailing zero fraction) and a property holding undefined becomes
// null (test/compat/corpus/099). Everything else is JSON.stringify's.
func setupJSON(rt *sobek.Runtime, val sobek.Value) (string, error) {
	replacer := rt.ToValue(func(call sobek.FunctionCall) sobek.Value {
		value := call.Argument(1)
		holder, ok := call.This.(*sobek.Object)
		if !ok {
			return value
		}
		if o, ok := holder.Get(call.Argument(0).String()).(*sobek.Object); ok && o.ClassName() == "Date" {
			if t, ok := o.Export().(time.Time); ok {
				return rt.ToValue(t.Format(time.RFC3339Nano))
			}
		}
		if sobek.IsUndefined(value) && holder.ClassName() != "Array" {
			return sobek.Null()
		}
		return value
	})
	json := rt.Get("JSON").ToObject(rt)
	stringify, _ := sobek.AssertFunction(json.Get("stringify"))
	r, err := stringify(sobek.Undefined(), val, replacer)
	if err != nil || sobek.IsUndefined(r) {
		return "", err
	}
	return r.String(), nil
}

// Teardown runs teardown(data) in a service VU if the script exports it.
func (s *Script) Teardown(ctx context.Context, rec metrics.Recorder, data json.RawMessage) error {
	if !s.exported["teardown"] {
		return nil
	}
	v, err := s.newVU(ctx, 0, rec)
	if err != nil {
		return err
	}
	arg := sobek.Undefined()
	if len(data) > 0 {
		if arg, err = v.json.parse(v.rt, data); err != nil {
			return exitcode.Errorf(exitcode.ScriptException, "teardown(): the setup data are not valid JSON: %v", s.describe(err))
		}
	}
	if _, err := v.lifecycle(ctx, "teardown", arg); err != nil {
		return s.lifecycleError("teardown", ctx, err)
	}
	return nil
}

// HandleSummary runs handleSummary(data) in a service VU. It returns what
// the function returned, each key ("stdout", "stderr" or a path) mapped to
// the content: strings as UTF-8, ArrayBuffers as their bytes. ok is false
// when the script does not export handleSummary or it returned nothing.
func (s *Script) HandleSummary(ctx context.Context, data map[string]any) (map[string][]byte, bool, error) {
	if !s.exported["handleSummary"] {
		return nil, false, nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, false, fmt.Errorf("handleSummary(): the summary data cannot be encoded: %w", err)
	}
	v, err := s.newVU(ctx, 0, discard{})
	if err != nil {
		return nil, false, err
	}
	arg, err := v.json.parse(v.rt, raw)
	if err != nil {
		return nil, false, fmt.Errorf("handleSummary(): %s", s.describe(err))
	}
	ret, err := v.lifecycle(ctx, "handleSummary", arg)
	if err != nil {
		return nil, false, s.lifecycleError("handleSummary", ctx, err)
	}
	if sobek.IsUndefined(ret) || sobek.IsNull(ret) {
		return nil, false, nil
	}
	return summaryResult(ret)
}

// summaryResult reads handleSummary()'s result as k6 does: an object
// whose values are strings, ArrayBuffers or Uint8Arrays, written to the
// output its key names. Any other result, or any other value (an object,
// a number, null), fails the whole result with k6's sentence, so that
// nothing is written as "[object Object]" and an array does not become
// files named 0, 1, ...
func summaryResult(ret sobek.Value) (map[string][]byte, bool, error) {
	obj, ok := ret.(*sobek.Object)
	if _, isMap := ret.Export().(map[string]any); !ok || !isMap {
		return nil, false, exitcode.Errorf(exitcode.ScriptException, "handleSummary() should return a map with string keys")
	}
	out := map[string][]byte{}
	for _, k := range obj.Keys() {
		switch x := obj.Get(k).Export().(type) {
		case string:
			out[k] = []byte(x)
		case sobek.ArrayBuffer:
			out[k] = append([]byte(nil), x.Bytes()...)
		case []byte:
			out[k] = append([]byte(nil), x...)
		default:
			return nil, false, exitcode.Errorf(exitcode.ScriptException,
				"error handling summary object %s: invalid type %T, it needs to be a string or ArrayBuffer", k, x)
		}
	}
	return out, true, nil
}

// lifecycle calls the exported function name with arg (nil: none) as code
// outside the init context, waiting for its promise if it is async.
func (v *vu) lifecycle(ctx context.Context, name string, arg sobek.Value) (sobek.Value, error) {
	fn, ok := sobek.AssertFunction(v.exports.Get(name))
	if !ok {
		return nil, fmt.Errorf("the script does not export a function named %s", name)
	}
	v.prepare()
	if v.suspect {
		if err := v.repair(ctx); err != nil {
			return nil, err
		}
	}
	st := &v.state
	st.Tags = v.conf.rootTags
	st.Group = ""
	st.Latency = executor.Latency{}
	if name == "setup" || name == "teardown" {
		// k6 runs them in a group of their own name: their samples, and
		// the checks in the summary's group tree, sit under it.
		st.Group = "::" + name
		if v.conf.groupTag {
			st.Tags = st.Tags.With("group", st.Group)
		}
	}
	tags := st.Tags
	st.DataSent, st.DataReceived = 0, 0
	v.setRunning(true)
	v.openInlet(ctx)
	var ret sobek.Value
	err := v.guard(ctx, func() error {
		var args []sobek.Value
		if arg != nil {
			args = []sobek.Value{arg}
		}
		r, err := fn(sobek.Undefined(), args...)
		if err != nil {
			return err
		}
		ret, err = v.settle(promiseOf(r), r)
		return err
	})
	v.setRunning(false)
	v.closeInlet()
	if name == "setup" || name == "teardown" {
		emitData(v.rec, st, time.Now(), tags)
	}
	flushAll(v.rec)
	return ret, err
}

// lifecycleError reports an error of setup, teardown or handleSummary:
// an abort keeps exit code 108, an exception gets 107 with its place, and
// an interruption because ctx ended says so (the engine turns a timeout
// into its own exit code).
func (s *Script) lifecycleError(name string, ctx context.Context, err error) error {
	if ie, ok := errors.AsType[*sobek.InterruptedError](err); ok {
		if ab, ok := ie.Value().(*errAborted); ok {
			return abortError(ab)
		}
	}
	if ctx.Err() != nil && isInterrupt(err) {
		return fmt.Errorf("%s() was interrupted: %w", name, ctx.Err())
	}
	return s.scriptError(err)
}
