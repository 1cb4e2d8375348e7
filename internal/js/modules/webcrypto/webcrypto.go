// Package webcrypto provides the global WebCrypto object "crypto" as k6
// offers it: getRandomValues, randomUUID and crypto.subtle with digest,
// generateKey, importKey, exportKey, sign, verify, encrypt, decrypt and
// deriveBits for AES-CBC/CTR/GCM, HMAC, ECDSA, ECDH, RSA-OAEP,
// RSASSA-PKCS1-v1_5, RSA-PSS and PBKDF2, all from Go's standard crypto
// packages.
//
// Every subtle method returns a promise. Arguments are read on the VU's
// goroutine; the cryptography runs on a goroutine of its own and the
// promise settles on the VU's event loop. Failures reject with errors
// named as WebCrypto names them (NotSupportedError, InvalidAccessError,
// OperationError, SyntaxError, DataError).
package webcrypto

import (
	"crypto/rand"
	"fmt"
	"slices"
	"sort"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

func init() {
	modules.RegisterGlobal("crypto", modules.ModuleFunc(New))
}

// New makes the crypto object of one VU.
func New(vu modules.VU) (modules.Exports, error) {
	rt := vu.Runtime()
	w := &webcrypto{vu: vu, rt: rt, handle: sobek.NewSymbol("CryptoKey")}
	subtle := &methods{rt: rt, fns: map[string]func(sobek.FunctionCall) sobek.Value{
		"digest":      w.digest,
		"generateKey": w.generateKey,
		"importKey":   w.importKey,
		"exportKey":   w.exportKey,
		"sign":        w.sign,
		"verify":      w.verify,
		"encrypt":     w.encrypt,
		"decrypt":     w.decrypt,
		"deriveBits":  w.deriveBits,
		"deriveKey":   w.unsupported("deriveKey"),
		"wrapKey":     w.unsupported("wrapKey"),
		"unwrapKey":   w.unsupported("unwrapKey"),
	}}
	c := &methods{rt: rt, fns: map[string]func(sobek.FunctionCall) sobek.Value{
		"getRandomValues": w.getRandomValues,
		"randomUUID":      func(sobek.FunctionCall) sobek.Value { return rt.ToValue(w.randomUUID()) },
	}, extra: map[string]sobek.Value{"subtle": rt.NewDynamicObject(subtle)}}
	return modules.Exports{Default: rt.NewDynamicObject(c)}, nil
}

// methods is an object whose functions are made on first use: a VU that
// calls two of them does not carry the other twelve.
type methods struct {
	rt    *sobek.Runtime
	fns   map[string]func(sobek.FunctionCall) sobek.Value
	extra map[string]sobek.Value
	made  map[string]sobek.Value
}

func (m *methods) Get(key string) sobek.Value {
	if v, ok := m.made[key]; ok {
		return v
	}
	if v, ok := m.extra[key]; ok {
		return v
	}
	fn, ok := m.fns[key]
	if !ok {
		return nil
	}
	v := m.rt.ToValue(fn)
	m.Set(key, v)
	return v
}

func (m *methods) Set(key string, v sobek.Value) bool {
	if m.made == nil {
		m.made = map[string]sobek.Value{}
	}
	m.made[key] = v
	return true
}

func (m *methods) Has(key string) bool { return m.Get(key) != nil }

func (m *methods) Delete(key string) bool {
	m.Set(key, nil)
	return true
}

func (m *methods) Keys() []string {
	keys := make([]string, 0, len(m.fns)+len(m.extra))
	for k := range m.fns {
		keys = append(keys, k)
	}
	for k := range m.extra {
		keys = append(keys, k)
	}
	for k, v := range m.made {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		if v == nil {
			keys = slices.DeleteFunc(keys, func(x string) bool { return x == k })
		}
	}
	sort.Strings(keys)
	return keys
}

type webcrypto struct {
	vu modules.VU
	rt *sobek.Runtime
	// handle is the symbol under which a CryptoKey object keeps its Go key.
	handle *sobek.Symbol
}

// maxRandom is the most bytes getRandomValues fills at once, as in
// WebCrypto.
const maxRandom = 65536

// getRandomValues(typedArray) fills an integer typed array with random
// bytes and returns it.
func (w *webcrypto) getRandomValues(c sobek.FunctionCall) sobek.Value {
	arg := c.Argument(0)
	o, ok := arg.(*sobek.Object)
	if ok {
		switch o.Export().(type) {
		case []uint8, []int8, []uint16, []int16, []uint32, []int32, []int64, []uint64:
			ok = o.ClassName() != "Array"
		default:
			ok = false
		}
	}
	if !ok {
		jsmod.Throw(w.rt, jsmod.Errorf("TypeMismatchError", "getRandomValues takes an integer typed array, not %s", jsmod.Describe(arg)))
	}
	buf, _ := o.Get("buffer").Export().(sobek.ArrayBuffer)
	off, n := o.Get("byteOffset").ToInteger(), o.Get("byteLength").ToInteger()
	if n > maxRandom {
		jsmod.Throw(w.rt, jsmod.Errorf("QuotaExceededError", "getRandomValues fills at most %d bytes, not %d", maxRandom, n))
	}
	_, _ = rand.Read(buf.Bytes()[off : off+n])
	return arg
}

// randomUUID returns a random (version 4) UUID.
func (w *webcrypto) randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (w *webcrypto) unsupported(method string) func(sobek.FunctionCall) sobek.Value {
	return func(sobek.FunctionCall) sobek.Value {
		p := jsmod.NewPromise(w.vu)
		p.Reject(jsmod.Errorf("NotSupportedError", "crypto.subtle.%s is not supported", method))
		return p.Value()
	}
}

// async runs an operation: prepare reads the arguments on the VU's
// goroutine and returns the work, which runs on a goroutine of its own;
// its result becomes the promise's value (see toJS).
func (w *webcrypto) async(prepare func() (func() (any, error), error)) sobek.Value {
	p := jsmod.NewPromise(w.vu)
	work, err := w.guard(prepare)
	if err != nil {
		p.Reject(err)
		return p.Value()
	}
	go func() {
		defer func() {
			// A bug here must fail the operation, not the process.
			if r := recover(); r != nil {
				p.Reject(errorf("OperationError", "internal error: %v", r))
			}
		}()
		v, err := work()
		if err != nil {
			p.Reject(err)
			return
		}
		p.Resolve(func(*sobek.Runtime) (any, error) { return w.toJS(v), nil })
	}()
	return p.Value()
}

// guard runs prepare, turning a JavaScript exception it raises (a getter
// of an argument that throws) into the rejection.
func (w *webcrypto) guard(prepare func() (func() (any, error), error)) (work func() (any, error), err error) {
	defer func() {
		if r := recover(); r != nil {
			ex, ok := r.(*sobek.Exception)
			if !ok {
				panic(r)
			}
			err = ex
		}
	}()
	return prepare()
}

// keyPair is generateKey's result for asymmetric algorithms.
type keyPair struct{ public, private *key }

// jwk is an exported JSON Web Key, in member order.
type jwk []jwkMember

type jwkMember struct {
	name  string
	value any
}

// toJS makes the JavaScript value of an operation's result.
func (w *webcrypto) toJS(v any) sobek.Value {
	rt := w.rt
	switch x := v.(type) {
	case []byte:
		return rt.ToValue(rt.NewArrayBuffer(x))
	case bool:
		return rt.ToValue(x)
	case *key:
		return w.keyObject(x)
	case keyPair:
		o := rt.NewObject()
		_ = o.Set("publicKey", w.keyObject(x.public))
		_ = o.Set("privateKey", w.keyObject(x.private))
		return o
	case jwk:
		o := rt.NewObject()
		for _, m := range x {
			_ = o.Set(m.name, m.value)
		}
		return o
	}
	panic(fmt.Sprintf("webcrypto: no JavaScript value for %T", v))
}
