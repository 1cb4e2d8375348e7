package webcrypto

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"

	"github.com/grafana/sobek"
)

// key is a CryptoKey's Go side.
type key struct {
	typ         string // "secret", "public" or "private"
	extractable bool
	alg         keyAlgorithm
	usages      []string

	secret  []byte            // AES, HMAC
	ecPriv  *ecdsa.PrivateKey // ECDSA, ECDH
	ecPub   *ecdsa.PublicKey
	rsaPriv *rsa.PrivateKey
	rsaPub  *rsa.PublicKey
}

// keyAlgorithm is a key's algorithm property.
type keyAlgorithm struct {
	name           string
	length         int64  // AES, HMAC: bits
	hash           string // HMAC, RSA
	namedCurve     string // EC
	modulusLength  int    // RSA
	publicExponent []byte // RSA
}

// keyObject makes the CryptoKey object of k. Its properties are
// read-only; the Go key hides under a symbol.
func (w *webcrypto) keyObject(k *key) *sobek.Object {
	rt := w.rt
	o := rt.NewObject()
	ro := func(name string, v any) {
		_ = o.DefineDataProperty(name, rt.ToValue(v), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	}
	ro("type", k.typ)
	ro("extractable", k.extractable)
	alg := rt.NewObject()
	_ = alg.Set("name", k.alg.name)
	switch k.alg.name {
	case aesCBC, aesCTR, aesGCM:
		_ = alg.Set("length", k.alg.length)
	case hmacAlg:
		_ = alg.Set("hash", w.named(k.alg.hash))
		_ = alg.Set("length", k.alg.length)
	case ecdsaAlg, ecdhAlg:
		_ = alg.Set("namedCurve", k.alg.namedCurve)
	case rsaOAEP, rsaPKCS1, rsaPSS:
		_ = alg.Set("modulusLength", k.alg.modulusLength)
		u8, _ := rt.New(rt.Get("Uint8Array"), rt.ToValue(rt.NewArrayBuffer(append([]byte{}, k.alg.publicExponent...))))
		_ = alg.Set("publicExponent", u8)
		_ = alg.Set("hash", w.named(k.alg.hash))
	}
	ro("algorithm", alg)
	usages := make([]any, len(k.usages))
	for i, u := range k.usages {
		usages[i] = u
	}
	ro("usages", rt.NewArray(usages...))
	_ = o.DefineDataPropertySymbol(w.handle, rt.ToValue(k), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_FALSE)
	return o
}

// named is {name}.
func (w *webcrypto) named(name string) *sobek.Object {
	o := w.rt.NewObject()
	_ = o.Set("name", name)
	return o
}

// keyOf returns the Go key of a CryptoKey object.
func (w *webcrypto) keyOf(v sobek.Value) (*key, bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil, false
	}
	h := o.GetSymbol(w.handle)
	if h == nil {
		return nil, false
	}
	k, ok := h.Export().(*key)
	return k, ok
}

// usable checks that k may be used for op with algorithm alg.
func usable(k *key, alg, op string) error {
	if k.alg.name != alg {
		return errorf("InvalidAccessError", "%s: the key is for %s, not %s", op, k.alg.name, alg)
	}
	if !contains(k.usages, op) {
		return errorf("InvalidAccessError", "the key does not have the %q usage", op)
	}
	return nil
}

// allowedUsages are the usages of each algorithm's keys by key type.
func allowedUsages(alg, typ string) []string {
	switch alg {
	case aesCBC, aesCTR, aesGCM:
		return []string{"encrypt", "decrypt", "wrapKey", "unwrapKey"}
	case hmacAlg:
		return []string{"sign", "verify"}
	case ecdsaAlg, rsaPKCS1, rsaPSS:
		if typ == "public" {
			return []string{"verify"}
		}
		return []string{"sign"}
	case ecdhAlg:
		if typ == "public" {
			return nil
		}
		return []string{"deriveKey", "deriveBits"}
	case pbkdf2:
		return []string{"deriveKey", "deriveBits"}
	case rsaOAEP:
		if typ == "public" {
			return []string{"encrypt", "wrapKey"}
		}
		return []string{"decrypt", "unwrapKey"}
	}
	return nil
}

// checkUsages fails with a SyntaxError when a usage does not fit the key,
// or when a secret or private key would have none.
func checkUsages(alg, typ string, usages []string) error {
	allowed := allowedUsages(alg, typ)
	for _, u := range usages {
		if !contains(allowed, u) {
			return errorf("SyntaxError", "the %s %s key cannot have the %q usage", alg, typ, u)
		}
	}
	if len(usages) == 0 && typ != "public" {
		return errorf("SyntaxError", "the %s %s key needs at least one usage", alg, typ)
	}
	return nil
}

// split divides requested usages between the keys of a pair.
func split(alg string, usages []string) (public, private []string, err error) {
	pubAllowed, privAllowed := allowedUsages(alg, "public"), allowedUsages(alg, "private")
	public, private = []string{}, []string{}
	for _, u := range usages {
		switch {
		case contains(pubAllowed, u):
			public = append(public, u)
		case contains(privAllowed, u):
			private = append(private, u)
		default:
			return nil, nil, errorf("SyntaxError", "the %s key pair cannot have the %q usage", alg, u)
		}
	}
	if len(private) == 0 {
		return nil, nil, errorf("SyntaxError", "the private key of a %s key pair needs at least one usage", alg)
	}
	return public, private, nil
}

// curves are the named curves of ECDSA and ECDH.
var curves = map[string]elliptic.Curve{
	"P-256": elliptic.P256(),
	"P-384": elliptic.P384(),
	"P-521": elliptic.P521(),
}

func curve(name string) (elliptic.Curve, error) {
	c, ok := curves[name]
	if !ok {
		return nil, errorf("NotSupportedError", "named curve %q is not supported; use P-256, P-384 or P-521", name)
	}
	return c, nil
}

// hmacDefaultLength is the default HMAC key length in bits: the hash's
// block size.
func hmacDefaultLength(hash string) int64 {
	if hash == "SHA-384" || hash == "SHA-512" {
		return 1024
	}
	return 512
}
