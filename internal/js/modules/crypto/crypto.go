// Package crypto implements the "k6/crypto" module: one-shot and
// incremental hashes and HMACs (md4, md5, sha1, the sha2 family,
// ripemd160), random bytes and hex encoding. md4 and ripemd160 come from
// golang.org/x/crypto, the rest from the standard library.
package crypto

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"

	"github.com/grafana/sobek"
	"golang.org/x/crypto/md4"       //nolint:staticcheck // k6/crypto offers md4; scripts use it for legacy protocols.
	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // k6/crypto offers ripemd160.

	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

func init() {
	modules.Register("k6/crypto", modules.ModuleFunc(New))
}

// algorithms are the hash functions scripts name.
var algorithms = map[string]func() hash.Hash{
	"md4":        md4.New,
	"md5":        md5.New,
	"sha1":       sha1.New,
	"sha256":     sha256.New,
	"sha384":     sha512.New384,
	"sha512":     sha512.New,
	"sha512_224": sha512.New512_224,
	"sha512_256": sha512.New512_256,
	"ripemd160":  ripemd160.New,
}

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	m := &module{vu: vu}
	named := map[string]any{
		"hmac":        m.hmac,
		"createHash":  m.createHash,
		"createHMAC":  m.createHMAC,
		"randomBytes": m.randomBytes,
		"hexEncode":   m.hexEncode,
	}
	for name, h := range algorithms {
		named[name] = m.oneShot(name, h)
	}
	return modules.Exports{Named: named}, nil
}

type module struct{ vu modules.VU }

// input reads data to hash: a string (as UTF-8), an ArrayBuffer, a typed
// array or a DataView.
func (m *module) input(fn string, v sobek.Value) []byte {
	rt := m.vu.Runtime()
	b, ok := jsmod.BytesOrString(rt, v)
	if !ok {
		jsmod.Throwf(rt, "%s: the input must be a string, an ArrayBuffer or a typed array, not %s", fn, jsmod.Describe(v))
	}
	return b
}

func (m *module) algorithm(fn string, v sobek.Value) func() hash.Hash {
	h, ok := algorithms[v.String()]
	if !ok || !sobek.IsString(v) {
		jsmod.Throwf(m.vu.Runtime(), "%s: invalid algorithm %s; use md4, md5, sha1, sha256, sha384, sha512, sha512_224, sha512_256 or ripemd160", fn, v)
	}
	return h
}

// output encodes a digest: hex, base64 (padded), base64url (padded),
// base64rawurl (unpadded) as strings, binary as an ArrayBuffer.
func (m *module) output(fn string, sum []byte, enc sobek.Value) sobek.Value {
	rt := m.vu.Runtime()
	name := ""
	if !jsmod.Absent(enc) {
		name = enc.String()
	}
	switch name {
	case "hex":
		return rt.ToValue(hex.EncodeToString(sum))
	case "base64":
		return rt.ToValue(base64.StdEncoding.EncodeToString(sum))
	case "base64url":
		return rt.ToValue(base64.URLEncoding.EncodeToString(sum))
	case "base64rawurl":
		return rt.ToValue(base64.RawURLEncoding.EncodeToString(sum))
	case "binary":
		return rt.ToValue(rt.NewArrayBuffer(sum))
	}
	jsmod.Throwf(rt, "%s: invalid output encoding %q; use hex, base64, base64url, base64rawurl or binary", fn, name)
	return nil
}

// oneShot makes md5(input, encoding) and its siblings.
func (m *module) oneShot(name string, newHash func() hash.Hash) func(sobek.FunctionCall) sobek.Value {
	return func(c sobek.FunctionCall) sobek.Value {
		h := newHash()
		h.Write(m.input(name, c.Argument(0)))
		return m.output(name, h.Sum(nil), c.Argument(1))
	}
}

// hmac(algorithm, secret, data, encoding) is a one-shot HMAC.
func (m *module) hmac(c sobek.FunctionCall) sobek.Value {
	h := hmac.New(m.algorithm("hmac", c.Argument(0)), m.input("hmac", c.Argument(1)))
	h.Write(m.input("hmac", c.Argument(2)))
	return m.output("hmac", h.Sum(nil), c.Argument(3))
}

// createHash(algorithm) returns a hasher with update(input) and
// digest(encoding).
func (m *module) createHash(c sobek.FunctionCall) sobek.Value {
	return m.hasher("createHash", m.algorithm("createHash", c.Argument(0))())
}

// createHMAC(algorithm, secret) is createHash for an HMAC.
func (m *module) createHMAC(c sobek.FunctionCall) sobek.Value {
	newHash := m.algorithm("createHMAC", c.Argument(0))
	return m.hasher("createHMAC", hmac.New(newHash, m.input("createHMAC", c.Argument(1))))
}

// hasher is the object createHash and createHMAC return. digest does not
// reset it: updates after a digest continue the same message, as in k6.
func (m *module) hasher(fn string, h hash.Hash) sobek.Value {
	rt := m.vu.Runtime()
	o := rt.NewObject()
	_ = o.Set("digest", func(c sobek.FunctionCall) sobek.Value {
		return m.output(fn+"().digest", h.Sum(nil), c.Argument(0))
	})
	_ = o.Set("update", func(c sobek.FunctionCall) sobek.Value {
		h.Write(m.input(fn+"().update", c.Argument(0)))
		return sobek.Undefined()
	})
	return o
}

// randomBytes(n) returns n cryptographically random bytes in an
// ArrayBuffer.
func (m *module) randomBytes(c sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	n := c.Argument(0).ToInteger()
	if n < 1 || n > 1<<30 {
		jsmod.Throwf(rt, "randomBytes: invalid size %v; it must be a positive number of bytes", c.Argument(0))
	}
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return rt.ToValue(rt.NewArrayBuffer(b))
}

// hexEncode(data) returns data in hexadecimal.
func (m *module) hexEncode(c sobek.FunctionCall) sobek.Value {
	return m.vu.Runtime().ToValue(hex.EncodeToString(m.input("hexEncode", c.Argument(0))))
}
