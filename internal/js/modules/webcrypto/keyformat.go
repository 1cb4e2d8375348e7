package webcrypto

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"math/big"
	"strings"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// importKey(format, keyData, algorithm, extractable, usages) with the
// formats raw (AES, HMAC, EC public keys), jwk, spki (EC, RSA public keys)
// and pkcs8 (EC, RSA private keys).
func (w *webcrypto) importKey(c sobek.FunctionCall) sobek.Value {
	return w.async(func() (func() (any, error), error) {
		format := c.Argument(0).String()
		p, err := w.algorithm(c.Argument(2), "importKey")
		if err != nil {
			return nil, err
		}
		extractable := c.Argument(3).ToBoolean()
		usages, err := w.usages(c.Argument(4))
		if err != nil {
			return nil, err
		}
		var raw []byte
		var j map[string]string
		switch format {
		case "raw", "spki", "pkcs8":
			if raw, err = w.data(c.Argument(1), "the key data"); err != nil {
				return nil, err
			}
		case "jwk":
			if j, err = w.jwkMembers(c.Argument(1)); err != nil {
				return nil, err
			}
		default:
			return nil, errorf("NotSupportedError", "key format %q is not supported; use raw, jwk, spki or pkcs8", format)
		}
		return func() (any, error) {
			k, err := importAs(format, raw, j, p)
			if err != nil {
				return nil, err
			}
			if err := checkUsages(p.name, k.typ, usages); err != nil {
				return nil, err
			}
			k.usages, k.extractable = usages, extractable
			return k, nil
		}, nil
	})
}

// jwkMembers reads the string members of a JSON Web Key.
func (w *webcrypto) jwkMembers(v sobek.Value) (map[string]string, error) {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil, errorf("TypeError", "a jwk key must be an object, not %s", jsmod.Describe(v))
	}
	out := map[string]string{}
	for _, k := range o.Keys() {
		if s := o.Get(k); s != nil && sobek.IsString(s) {
			out[k] = s.String()
		}
	}
	return out, nil
}

func importAs(format string, raw []byte, j map[string]string, p *params) (*key, error) {
	k := &key{alg: keyAlgorithm{name: p.name, hash: p.hash, namedCurve: p.namedCurve}}
	switch p.name {
	case pbkdf2:
		if format != "raw" {
			return nil, errorf("NotSupportedError", "PBKDF2 keys can only be imported as raw")
		}
		k.typ, k.secret = "secret", raw
		return k, nil
	case aesCBC, aesCTR, aesGCM, hmacAlg:
		switch format {
		case "raw":
		case "jwk":
			if j["kty"] != "oct" {
				return nil, errorf("DataError", "the %s jwk key must have kty \"oct\", not %q", p.name, j["kty"])
			}
			b, err := b64(j, "k")
			if err != nil {
				return nil, err
			}
			raw = b
		default:
			return nil, errorf("NotSupportedError", "%s keys cannot be imported as %s", p.name, format)
		}
		k.typ, k.secret = "secret", raw
		k.alg.length = int64(len(raw)) * 8
		if p.name == hmacAlg {
			if len(raw) == 0 {
				return nil, errorf("DataError", "HMAC: the key is empty")
			}
			if p.hasLength && (p.length > k.alg.length || p.length <= k.alg.length-8) {
				return nil, errorf("DataError", "HMAC: length %d does not fit a %d-byte key", p.length, len(raw))
			}
			return k, nil
		}
		switch len(raw) {
		case 16, 24, 32:
		default:
			return nil, errorf("DataError", "%s: a key has 16, 24 or 32 bytes, not %d", p.name, len(raw))
		}
		return k, nil
	case ecdsaAlg, ecdhAlg:
		crv, err := curve(p.namedCurve)
		if err != nil {
			return nil, err
		}
		switch format {
		case "raw":
			pub, err := ecdsa.ParseUncompressedPublicKey(crv, raw)
			if err != nil {
				return nil, errorf("DataError", "%s: not an uncompressed %s point: %v", p.name, p.namedCurve, err)
			}
			k.typ, k.ecPub = "public", pub
		case "spki":
			pk, err := x509.ParsePKIXPublicKey(raw)
			pub, ok := pk.(*ecdsa.PublicKey)
			if err != nil || !ok {
				return nil, errorf("DataError", "%s: not an EC public key in SPKI: %v", p.name, err)
			}
			if pub.Curve != crv {
				return nil, errorf("DataError", "%s: the key is on %s, not %s", p.name, pub.Curve.Params().Name, p.namedCurve)
			}
			k.typ, k.ecPub = "public", pub
		case "pkcs8":
			pk, err := x509.ParsePKCS8PrivateKey(raw)
			priv, ok := pk.(*ecdsa.PrivateKey)
			if err != nil || !ok {
				return nil, errorf("DataError", "%s: not an EC private key in PKCS #8: %v", p.name, err)
			}
			if priv.Curve != crv {
				return nil, errorf("DataError", "%s: the key is on %s, not %s", p.name, priv.Curve.Params().Name, p.namedCurve)
			}
			k.typ, k.ecPriv, k.ecPub = "private", priv, &priv.PublicKey
		case "jwk":
			if j["kty"] != "EC" || j["crv"] != p.namedCurve {
				return nil, errorf("DataError", "%s: the jwk key must have kty \"EC\" and crv %q", p.name, p.namedCurve)
			}
			x, err := b64(j, "x")
			if err != nil {
				return nil, err
			}
			y, err := b64(j, "y")
			if err != nil {
				return nil, err
			}
			n := (crv.Params().BitSize + 7) / 8
			if len(x) != n || len(y) != n {
				return nil, errorf("DataError", "%s: x and y must have %d bytes", p.name, n)
			}
			pub, err := ecdsa.ParseUncompressedPublicKey(crv, append(append([]byte{4}, x...), y...))
			if err != nil {
				return nil, errorf("DataError", "%s: %v", p.name, err)
			}
			if _, has := j["d"]; !has {
				k.typ, k.ecPub = "public", pub
				break
			}
			d, err := b64(j, "d")
			if err != nil {
				return nil, err
			}
			priv, err := ecdsa.ParseRawPrivateKey(crv, d)
			if err != nil {
				return nil, errorf("DataError", "%s: %v", p.name, err)
			}
			if !priv.PublicKey.Equal(pub) {
				return nil, errorf("DataError", "%s: d does not match x and y", p.name)
			}
			k.typ, k.ecPriv, k.ecPub = "private", priv, &priv.PublicKey
		}
		return k, nil
	}
	// RSA
	switch format {
	case "spki":
		pk, err := x509.ParsePKIXPublicKey(raw)
		pub, ok := pk.(*rsa.PublicKey)
		if err != nil || !ok {
			return nil, errorf("DataError", "%s: not an RSA public key in SPKI: %v", p.name, err)
		}
		k.typ, k.rsaPub = "public", pub
	case "pkcs8":
		pk, err := x509.ParsePKCS8PrivateKey(raw)
		priv, ok := pk.(*rsa.PrivateKey)
		if err != nil || !ok {
			return nil, errorf("DataError", "%s: not an RSA private key in PKCS #8: %v", p.name, err)
		}
		k.typ, k.rsaPriv = "private", priv
	case "jwk":
		if j["kty"] != "RSA" {
			return nil, errorf("DataError", "%s: the jwk key must have kty \"RSA\", not %q", p.name, j["kty"])
		}
		nums := map[string]*big.Int{}
		names := []string{"n", "e"}
		if _, has := j["d"]; has {
			names = append(names, "d", "p", "q")
		}
		for _, name := range names {
			b, err := b64(j, name)
			if err != nil {
				return nil, err
			}
			nums[name] = new(big.Int).SetBytes(b)
		}
		if !nums["e"].IsInt64() || nums["e"].Int64() > 1<<31-1 {
			return nil, errorf("DataError", "%s: the public exponent is too large", p.name)
		}
		pub := rsa.PublicKey{N: nums["n"], E: int(nums["e"].Int64())}
		if nums["d"] == nil {
			k.typ, k.rsaPub = "public", &pub
			break
		}
		priv := &rsa.PrivateKey{PublicKey: pub, D: nums["d"], Primes: []*big.Int{nums["p"], nums["q"]}}
		if err := priv.Validate(); err != nil {
			return nil, errorf("DataError", "%s: %v", p.name, err)
		}
		priv.Precompute()
		k.typ, k.rsaPriv = "private", priv
	default:
		return nil, errorf("NotSupportedError", "%s keys cannot be imported as %s", p.name, format)
	}
	if k.rsaPriv != nil {
		k.rsaPub = &k.rsaPriv.PublicKey
	}
	k.alg.modulusLength = k.rsaPub.N.BitLen()
	k.alg.publicExponent = big.NewInt(int64(k.rsaPub.E)).Bytes()
	return k, nil
}

func b64(j map[string]string, name string) ([]byte, error) {
	s, ok := j[name]
	if !ok {
		return nil, errorf("DataError", "the jwk key has no %q", name)
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, errorf("DataError", "the jwk key's %q is not base64url: %v", name, err)
	}
	return b, nil
}

// exportKey(format, key)
func (w *webcrypto) exportKey(c sobek.FunctionCall) sobek.Value {
	return w.async(func() (func() (any, error), error) {
		format := c.Argument(0).String()
		k, ok := w.keyOf(c.Argument(1))
		if !ok {
			return nil, errorf("TypeError", "exportKey needs a CryptoKey, not %s", jsmod.Describe(c.Argument(1)))
		}
		switch format {
		case "raw", "jwk", "spki", "pkcs8":
		default:
			return nil, errorf("NotSupportedError", "key format %q is not supported; use raw, jwk, spki or pkcs8", format)
		}
		if !k.extractable {
			return nil, errorf("InvalidAccessError", "the key is not extractable")
		}
		return func() (any, error) { return export(format, k) }, nil
	})
}

func export(format string, k *key) (any, error) {
	enc := base64.RawURLEncoding.EncodeToString
	ops := make([]any, len(k.usages))
	for i, u := range k.usages {
		ops[i] = u
	}
	switch {
	case k.alg.name == pbkdf2:
		return nil, errorf("NotSupportedError", "PBKDF2 keys cannot be exported")
	case k.typ == "secret":
		switch format {
		case "raw":
			return append([]byte{}, k.secret...), nil
		case "jwk":
			alg := "HS" + strings.TrimPrefix(k.alg.hash, "SHA-")
			if k.alg.hash == "SHA-1" {
				alg = "HS1"
			}
			if k.alg.name != hmacAlg {
				alg = "A" + big.NewInt(k.alg.length).String() + strings.TrimPrefix(k.alg.name, "AES-")
			}
			return jwk{{"kty", "oct"}, {"k", enc(k.secret)}, {"alg", alg}, {"key_ops", ops}, {"ext", true}}, nil
		}
	case k.ecPub != nil || k.ecPriv != nil:
		pub := k.ecPub
		if k.ecPriv != nil {
			pub = &k.ecPriv.PublicKey
		}
		switch {
		case format == "raw" && k.typ == "public":
			b, err := pub.Bytes()
			if err != nil {
				return nil, errorf("OperationError", "%v", err)
			}
			return b, nil
		case format == "spki" && k.typ == "public":
			b, err := x509.MarshalPKIXPublicKey(pub)
			if err != nil {
				return nil, errorf("OperationError", "%v", err)
			}
			return b, nil
		case format == "pkcs8" && k.typ == "private":
			b, err := x509.MarshalPKCS8PrivateKey(k.ecPriv)
			if err != nil {
				return nil, errorf("OperationError", "%v", err)
			}
			return b, nil
		case format == "jwk":
			point, err := pub.Bytes()
			if err != nil {
				return nil, errorf("OperationError", "%v", err)
			}
			n := (len(point) - 1) / 2
			out := jwk{{"kty", "EC"}, {"crv", k.alg.namedCurve}, {"x", enc(point[1 : 1+n])}, {"y", enc(point[1+n:])}}
			if k.ecPriv != nil {
				d, err := k.ecPriv.Bytes()
				if err != nil {
					return nil, errorf("OperationError", "%v", err)
				}
				out = append(out, jwkMember{"d", enc(d)})
			}
			return append(out, jwkMember{"key_ops", ops}, jwkMember{"ext", k.extractable}), nil
		}
	default: // RSA
		switch {
		case format == "spki" && k.typ == "public":
			b, err := x509.MarshalPKIXPublicKey(k.rsaPub)
			if err != nil {
				return nil, errorf("OperationError", "%v", err)
			}
			return b, nil
		case format == "pkcs8" && k.typ == "private":
			b, err := x509.MarshalPKCS8PrivateKey(k.rsaPriv)
			if err != nil {
				return nil, errorf("OperationError", "%v", err)
			}
			return b, nil
		case format == "jwk":
			pub := k.rsaPub
			out := jwk{{"kty", "RSA"}, {"n", enc(pub.N.Bytes())}, {"e", enc(big.NewInt(int64(pub.E)).Bytes())}}
			if priv := k.rsaPriv; priv != nil {
				// Every way a private key is made precomputes it, so
				// concurrent operations only read it.
				out = append(out, jwkMember{"d", enc(priv.D.Bytes())}, jwkMember{"p", enc(priv.Primes[0].Bytes())},
					jwkMember{"q", enc(priv.Primes[1].Bytes())}, jwkMember{"dp", enc(priv.Precomputed.Dp.Bytes())},
					jwkMember{"dq", enc(priv.Precomputed.Dq.Bytes())}, jwkMember{"qi", enc(priv.Precomputed.Qinv.Bytes())})
			}
			return append(out, jwkMember{"alg", rsaJWKAlg(k.alg.name, k.alg.hash)}, jwkMember{"key_ops", ops}, jwkMember{"ext", k.extractable}), nil
		}
	}
	if format == "raw" && k.typ == "private" {
		return nil, errorf("InvalidAccessError", "a private key cannot be exported as raw")
	}
	return nil, errorf("NotSupportedError", "the %s %s key cannot be exported as %s", k.alg.name, k.typ, format)
}

// rsaJWKAlg is the "alg" of an RSA JSON Web Key.
func rsaJWKAlg(name, hash string) string {
	bits := strings.TrimPrefix(hash, "SHA-")
	switch name {
	case rsaOAEP:
		if bits == "1" {
			return "RSA-OAEP"
		}
		return "RSA-OAEP-" + bits
	case rsaPSS:
		return "PS" + bits
	}
	return "RS" + bits
}
