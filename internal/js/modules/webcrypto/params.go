package webcrypto

import (
	"crypto"
	_ "crypto/sha1" // SHA-1 for digest, HMAC and RSA.
	_ "crypto/sha256"
	_ "crypto/sha512"
	"strconv"
	"strings"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// The algorithm names, as WebCrypto spells them.
const (
	aesCBC   = "AES-CBC"
	aesCTR   = "AES-CTR"
	aesGCM   = "AES-GCM"
	hmacAlg  = "HMAC"
	ecdsaAlg = "ECDSA"
	ecdhAlg  = "ECDH"
	rsaOAEP  = "RSA-OAEP"
	rsaPKCS1 = "RSASSA-PKCS1-v1_5"
	rsaPSS   = "RSA-PSS"
	pbkdf2   = "PBKDF2"
)

var algorithmNames = []string{aesCBC, aesCTR, aesGCM, hmacAlg, ecdsaAlg, ecdhAlg, rsaOAEP, rsaPKCS1, rsaPSS, pbkdf2,
	"SHA-1", "SHA-256", "SHA-384", "SHA-512"}

// hashes are the digests WebCrypto names.
var hashes = map[string]crypto.Hash{
	"SHA-1":   crypto.SHA1,
	"SHA-256": crypto.SHA256,
	"SHA-384": crypto.SHA384,
	"SHA-512": crypto.SHA512,
}

// params is an algorithm argument, normalised: the fields the algorithm
// uses are set, the others zero.
type params struct {
	name           string
	hash           string
	length         int64 // AES key bits, HMAC key bits, AES-CTR counter bits
	hasLength      bool
	namedCurve     string
	modulusLength  int
	publicExponent []byte
	iv             []byte // AES-CBC, AES-GCM; the counter block for AES-CTR
	additionalData []byte
	tagLength      int64
	label          []byte
	saltLength     int64
	public         *key // ECDH's peer key
	salt           []byte
	iterations     int64
}

func errorf(name, format string, args ...any) error { return jsmod.Errorf(name, format, args...) }

// canonical spells an algorithm name as WebCrypto does; names match
// without regard to case.
func canonical(name string) string {
	for _, n := range algorithmNames {
		if strings.EqualFold(n, name) {
			return n
		}
	}
	return strings.ToUpper(name)
}

// algorithm reads an algorithm argument: a name or an object with a name
// and the parameters op needs.
func (w *webcrypto) algorithm(v sobek.Value, op string) (*params, error) {
	rt := w.rt
	p := &params{}
	var o *sobek.Object
	switch {
	case v != nil && sobek.IsString(v):
		p.name = canonical(v.String())
	default:
		var ok bool
		o, ok = v.(*sobek.Object)
		if !ok {
			return nil, errorf("TypeError", "the algorithm must be a name or an object with a name, not %s", jsmod.Describe(v))
		}
		n := o.Get("name")
		if jsmod.Absent(n) {
			return nil, errorf("TypeError", "the algorithm has no name")
		}
		p.name = canonical(n.String())
	}
	if !supports(p.name, op) {
		return nil, errorf("NotSupportedError", "algorithm %q is not supported for %s", p.name, op)
	}
	get := func(name string) sobek.Value {
		if o == nil {
			return sobek.Undefined()
		}
		return o.Get(name)
	}
	bytes := func(name string, required bool) ([]byte, error) {
		v := get(name)
		if jsmod.Absent(v) {
			if required {
				return nil, errorf("TypeError", "%s: the algorithm's %s is missing", p.name, name)
			}
			return nil, nil
		}
		b, ok := jsmod.Bytes(rt, v)
		if !ok {
			return nil, errorf("TypeError", "%s: the algorithm's %s must be an ArrayBuffer or a typed array, not %s", p.name, name, jsmod.Describe(v))
		}
		return b, nil
	}
	number := func(name string) (int64, bool) {
		v := get(name)
		if jsmod.Absent(v) {
			return 0, false
		}
		return v.ToInteger(), true
	}
	hash := func(required bool) error {
		v := get("hash")
		if jsmod.Absent(v) {
			if required {
				return errorf("TypeError", "%s: the algorithm's hash is missing", p.name)
			}
			return nil
		}
		h, err := w.algorithm(v, "digest")
		if err != nil {
			return err
		}
		p.hash = h.name
		return nil
	}
	var err error
	switch p.name {
	case aesCBC, aesGCM:
		p.length, p.hasLength = number("length")
		if op == "encrypt" || op == "decrypt" {
			if p.iv, err = bytes("iv", true); err != nil {
				return nil, err
			}
			if p.additionalData, err = bytes("additionalData", false); err != nil {
				return nil, err
			}
			if p.tagLength, _ = number("tagLength"); p.tagLength == 0 {
				p.tagLength = 128
			}
		}
	case aesCTR:
		if op == "encrypt" || op == "decrypt" {
			if p.iv, err = bytes("counter", true); err != nil {
				return nil, err
			}
			var ok bool
			if p.length, ok = number("length"); !ok {
				return nil, errorf("TypeError", "AES-CTR: the algorithm's length (counter bits) is missing")
			}
		} else {
			p.length, p.hasLength = number("length")
		}
	case hmacAlg:
		if op == "generateKey" || op == "importKey" {
			if err := hash(true); err != nil {
				return nil, err
			}
			p.length, p.hasLength = number("length")
		}
	case ecdsaAlg, ecdhAlg:
		if op == "generateKey" || op == "importKey" {
			c := get("namedCurve")
			if jsmod.Absent(c) {
				return nil, errorf("TypeError", "%s: the algorithm's namedCurve is missing", p.name)
			}
			p.namedCurve = c.String()
		}
		if p.name == ecdsaAlg && (op == "sign" || op == "verify") {
			if err := hash(true); err != nil {
				return nil, err
			}
		}
		if op == "deriveBits" {
			pub := get("public")
			k, ok := w.keyOf(pub)
			if !ok {
				return nil, errorf("TypeError", "ECDH: the algorithm's public must be a CryptoKey, not %s", jsmod.Describe(pub))
			}
			p.public = k
		}
	case pbkdf2:
		if op == "deriveBits" {
			if p.salt, err = bytes("salt", true); err != nil {
				return nil, err
			}
			var ok bool
			if p.iterations, ok = number("iterations"); !ok || p.iterations < 1 {
				return nil, errorf("OperationError", "PBKDF2: iterations must be a positive number")
			}
			if err := hash(true); err != nil {
				return nil, err
			}
		}
	case rsaOAEP, rsaPKCS1, rsaPSS:
		switch op {
		case "generateKey":
			n, ok := number("modulusLength")
			if !ok {
				return nil, errorf("TypeError", "%s: the algorithm's modulusLength is missing", p.name)
			}
			p.modulusLength = int(n)
			if p.publicExponent, err = bytes("publicExponent", true); err != nil {
				return nil, err
			}
			if err := hash(true); err != nil {
				return nil, err
			}
		case "importKey":
			if err := hash(true); err != nil {
				return nil, err
			}
		case "encrypt", "decrypt":
			if p.label, err = bytes("label", false); err != nil {
				return nil, err
			}
		}
		if p.name == rsaPSS && (op == "sign" || op == "verify") {
			var ok bool
			if p.saltLength, ok = number("saltLength"); !ok {
				return nil, errorf("TypeError", "RSA-PSS: the algorithm's saltLength is missing")
			}
		}
	}
	return p, nil
}

// supports says which operations each algorithm has.
func supports(alg, op string) bool {
	switch alg {
	case "SHA-1", "SHA-256", "SHA-384", "SHA-512":
		return op == "digest"
	case aesCBC, aesCTR, aesGCM, rsaOAEP:
		return op == "generateKey" || op == "importKey" || op == "encrypt" || op == "decrypt"
	case hmacAlg, ecdsaAlg, rsaPKCS1, rsaPSS:
		return op == "generateKey" || op == "importKey" || op == "sign" || op == "verify"
	case ecdhAlg:
		return op == "generateKey" || op == "importKey" || op == "deriveBits"
	case pbkdf2:
		return op == "importKey" || op == "deriveBits"
	}
	return false
}

// data reads a BufferSource argument.
func (w *webcrypto) data(v sobek.Value, what string) ([]byte, error) {
	b, ok := jsmod.Bytes(w.rt, v)
	if !ok {
		return nil, errorf("TypeError", "%s must be an ArrayBuffer, a typed array or a DataView, not %s", what, jsmod.Describe(v))
	}
	return b, nil
}

// usages reads a list of key usages.
func (w *webcrypto) usages(v sobek.Value) ([]string, error) {
	o, ok := v.(*sobek.Object)
	if !ok || o.ClassName() != "Array" {
		return nil, errorf("TypeError", "the key usages must be an array, not %s", jsmod.Describe(v))
	}
	var out []string
	n := o.Get("length").ToInteger()
	for i := range n {
		u := o.Get(strconv.FormatInt(i, 10)).String()
		switch u {
		case "encrypt", "decrypt", "sign", "verify", "deriveKey", "deriveBits", "wrapKey", "unwrapKey":
		default:
			return nil, errorf("TypeError", "%q is not a key usage", u)
		}
		if !contains(out, u) {
			out = append(out, u)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
