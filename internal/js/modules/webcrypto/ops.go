package webcrypto

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/hmac"
	pbkdf2pkg "crypto/pbkdf2"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"math/big"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// digest(algorithm, data)
func (w *webcrypto) digest(c sobek.FunctionCall) sobek.Value {
	return w.async(func() (func() (any, error), error) {
		p, err := w.algorithm(c.Argument(0), "digest")
		if err != nil {
			return nil, err
		}
		data, err := w.data(c.Argument(1), "digest's data")
		if err != nil {
			return nil, err
		}
		return func() (any, error) {
			h := hashes[p.name].New()
			h.Write(data)
			return h.Sum(nil), nil
		}, nil
	})
}

// generateKey(algorithm, extractable, usages)
func (w *webcrypto) generateKey(c sobek.FunctionCall) sobek.Value {
	return w.async(func() (func() (any, error), error) {
		p, err := w.algorithm(c.Argument(0), "generateKey")
		if err != nil {
			return nil, err
		}
		extractable := c.Argument(1).ToBoolean()
		usages, err := w.usages(c.Argument(2))
		if err != nil {
			return nil, err
		}
		switch p.name {
		case aesCBC, aesCTR, aesGCM, hmacAlg:
			if err := checkUsages(p.name, "secret", usages); err != nil {
				return nil, err
			}
			bits := p.length
			if p.name == hmacAlg {
				if !p.hasLength {
					bits = hmacDefaultLength(p.hash)
				}
				if bits <= 0 || bits > 1<<16 {
					return nil, errorf("OperationError", "HMAC: invalid key length %d", bits)
				}
			} else if bits != 128 && bits != 192 && bits != 256 {
				return nil, errorf("OperationError", "%s: the key length must be 128, 192 or 256 bits, not %d", p.name, bits)
			}
			return func() (any, error) {
				b := make([]byte, (bits+7)/8)
				_, _ = rand.Read(b)
				return &key{typ: "secret", extractable: extractable, usages: usages, secret: b,
					alg: keyAlgorithm{name: p.name, length: bits, hash: p.hash}}, nil
			}, nil
		}
		pubUsages, privUsages, err := split(p.name, usages)
		if err != nil {
			return nil, err
		}
		pair := func(alg keyAlgorithm) (*key, *key) {
			return &key{typ: "public", extractable: true, usages: pubUsages, alg: alg},
				&key{typ: "private", extractable: extractable, usages: privUsages, alg: alg}
		}
		switch p.name {
		case ecdsaAlg, ecdhAlg:
			crv, err := curve(p.namedCurve)
			if err != nil {
				return nil, err
			}
			return func() (any, error) {
				priv, err := ecdsa.GenerateKey(crv, rand.Reader)
				if err != nil {
					return nil, errorf("OperationError", "%s: %v", p.name, err)
				}
				pub, pk := pair(keyAlgorithm{name: p.name, namedCurve: p.namedCurve})
				pub.ecPub, pk.ecPriv, pk.ecPub = &priv.PublicKey, priv, &priv.PublicKey
				return keyPair{public: pub, private: pk}, nil
			}, nil
		default: // RSA
			e := new(big.Int).SetBytes(p.publicExponent)
			if e.Cmp(big.NewInt(65537)) != 0 {
				return nil, errorf("OperationError", "%s: only the public exponent 65537 ([1, 0, 1]) is supported", p.name)
			}
			if p.modulusLength < 1024 || p.modulusLength > 16384 || p.modulusLength%8 != 0 {
				return nil, errorf("OperationError", "%s: the modulus length must be a multiple of 8 from 1024 to 16384 bits, not %d", p.name, p.modulusLength)
			}
			return func() (any, error) {
				priv, err := rsa.GenerateKey(rand.Reader, p.modulusLength)
				if err != nil {
					return nil, errorf("OperationError", "%s: %v", p.name, err)
				}
				pub, pk := pair(keyAlgorithm{name: p.name, hash: p.hash, modulusLength: p.modulusLength, publicExponent: []byte{1, 0, 1}})
				pub.rsaPub, pk.rsaPriv, pk.rsaPub = &priv.PublicKey, priv, &priv.PublicKey
				return keyPair{public: pub, private: pk}, nil
			}, nil
		}
	})
}

// sign(algorithm, key, data)
func (w *webcrypto) sign(c sobek.FunctionCall) sobek.Value {
	return w.async(func() (func() (any, error), error) {
		p, k, data, err := w.operands(c, "sign")
		if err != nil {
			return nil, err
		}
		return func() (any, error) { return signWith(p, k, data) }, nil
	})
}

// verify(algorithm, key, signature, data)
func (w *webcrypto) verify(c sobek.FunctionCall) sobek.Value {
	return w.async(func() (func() (any, error), error) {
		p, k, sig, err := w.operands(c, "verify")
		if err != nil {
			return nil, err
		}
		data, err := w.data(c.Argument(3), "verify's data")
		if err != nil {
			return nil, err
		}
		return func() (any, error) { return verifyWith(p, k, sig, data) }, nil
	})
}

// encrypt(algorithm, key, data)
func (w *webcrypto) encrypt(c sobek.FunctionCall) sobek.Value {
	return w.async(func() (func() (any, error), error) {
		p, k, data, err := w.operands(c, "encrypt")
		if err != nil {
			return nil, err
		}
		return func() (any, error) { return crypt(p, k, data, true) }, nil
	})
}

// decrypt(algorithm, key, data)
func (w *webcrypto) decrypt(c sobek.FunctionCall) sobek.Value {
	return w.async(func() (func() (any, error), error) {
		p, k, data, err := w.operands(c, "decrypt")
		if err != nil {
			return nil, err
		}
		return func() (any, error) { return crypt(p, k, data, false) }, nil
	})
}

// operands reads (algorithm, key, data) and checks the key may do op.
func (w *webcrypto) operands(c sobek.FunctionCall, op string) (*params, *key, []byte, error) {
	p, err := w.algorithm(c.Argument(0), op)
	if err != nil {
		return nil, nil, nil, err
	}
	k, ok := w.keyOf(c.Argument(1))
	if !ok {
		return nil, nil, nil, errorf("TypeError", "%s needs a CryptoKey, not %s", op, jsmod.Describe(c.Argument(1)))
	}
	if err := usable(k, p.name, op); err != nil {
		return nil, nil, nil, err
	}
	data, err := w.data(c.Argument(2), op+"'s data")
	if err != nil {
		return nil, nil, nil, err
	}
	return p, k, data, nil
}

// deriveBits(algorithm, baseKey, length)
func (w *webcrypto) deriveBits(c sobek.FunctionCall) sobek.Value {
	return w.async(func() (func() (any, error), error) {
		p, err := w.algorithm(c.Argument(0), "deriveBits")
		if err != nil {
			return nil, err
		}
		k, ok := w.keyOf(c.Argument(1))
		if !ok {
			return nil, errorf("TypeError", "deriveBits needs a CryptoKey, not %s", jsmod.Describe(c.Argument(1)))
		}
		if err := usable(k, p.name, "deriveBits"); err != nil {
			return nil, err
		}
		if p.name == pbkdf2 {
			return pbkdf2Bits(p, k, c.Argument(2))
		}
		pub := p.public
		if pub.typ != "public" || pub.alg.name != ecdhAlg {
			return nil, errorf("InvalidAccessError", "ECDH: the algorithm's public must be an ECDH public key")
		}
		if pub.alg.namedCurve != k.alg.namedCurve {
			return nil, errorf("InvalidAccessError", "ECDH: the keys are on different curves (%s, %s)", k.alg.namedCurve, pub.alg.namedCurve)
		}
		length := int64(-1)
		if l := c.Argument(2); !sobek.IsUndefined(l) && !sobek.IsNull(l) {
			length = l.ToInteger()
		}
		return func() (any, error) {
			priv, err := k.ecPriv.ECDH()
			if err != nil {
				return nil, errorf("OperationError", "ECDH: %v", err)
			}
			pk, err := pub.ecPub.ECDH()
			if err != nil {
				return nil, errorf("OperationError", "ECDH: %v", err)
			}
			secret, err := priv.ECDH(pk)
			if err != nil {
				return nil, errorf("OperationError", "ECDH: %v", err)
			}
			if length < 0 {
				return secret, nil
			}
			if length > int64(len(secret))*8 {
				return nil, errorf("OperationError", "ECDH: %d bits asked, the shared secret has %d", length, len(secret)*8)
			}
			out := secret[:(length+7)/8]
			if r := length % 8; r != 0 {
				out[len(out)-1] &= byte(0xff << (8 - r))
			}
			return out, nil
		}, nil
	})
}

// pbkdf2Bits derives length bits (a multiple of 8) from a password.
func pbkdf2Bits(p *params, k *key, l sobek.Value) (func() (any, error), error) {
	if jsmod.Absent(l) {
		return nil, errorf("OperationError", "PBKDF2: the length is missing")
	}
	length := l.ToInteger()
	if length <= 0 || length%8 != 0 {
		return nil, errorf("OperationError", "PBKDF2: the length must be a positive multiple of 8, not %d", length)
	}
	return func() (any, error) {
		out, err := pbkdf2pkg.Key(hashes[p.hash].New, string(k.secret), p.salt, int(p.iterations), int(length/8))
		if err != nil {
			return nil, errorf("OperationError", "PBKDF2: %v", err)
		}
		return out, nil
	}, nil
}

func signWith(p *params, k *key, data []byte) (any, error) {
	switch k.alg.name {
	case hmacAlg:
		m := hmac.New(hashes[k.alg.hash].New, k.secret)
		m.Write(data)
		return m.Sum(nil), nil
	case ecdsaAlg:
		h := hashes[p.hash].New()
		h.Write(data)
		r, s, err := ecdsa.Sign(rand.Reader, k.ecPriv, h.Sum(nil))
		if err != nil {
			return nil, errorf("OperationError", "ECDSA: %v", err)
		}
		n := (k.ecPriv.Curve.Params().BitSize + 7) / 8
		sig := make([]byte, 2*n)
		r.FillBytes(sig[:n])
		s.FillBytes(sig[n:])
		return sig, nil
	}
	hash := hashes[k.alg.hash]
	h := hash.New()
	h.Write(data)
	var sig []byte
	var err error
	if k.alg.name == rsaPSS {
		sig, err = rsa.SignPSS(rand.Reader, k.rsaPriv, hash, h.Sum(nil), &rsa.PSSOptions{SaltLength: int(p.saltLength)})
	} else {
		sig, err = rsa.SignPKCS1v15(rand.Reader, k.rsaPriv, hash, h.Sum(nil))
	}
	if err != nil {
		return nil, errorf("OperationError", "%s: %v", k.alg.name, err)
	}
	return sig, nil
}

func verifyWith(p *params, k *key, sig, data []byte) (any, error) {
	switch k.alg.name {
	case hmacAlg:
		m := hmac.New(hashes[k.alg.hash].New, k.secret)
		m.Write(data)
		return hmac.Equal(m.Sum(nil), sig), nil
	case ecdsaAlg:
		h := hashes[p.hash].New()
		h.Write(data)
		n := (k.ecPub.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*n {
			return false, nil
		}
		r, s := new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])
		return ecdsa.Verify(k.ecPub, h.Sum(nil), r, s), nil
	}
	hash := hashes[k.alg.hash]
	h := hash.New()
	h.Write(data)
	if k.alg.name == rsaPSS {
		return rsa.VerifyPSS(k.rsaPub, hash, h.Sum(nil), sig, &rsa.PSSOptions{SaltLength: int(p.saltLength)}) == nil, nil
	}
	return rsa.VerifyPKCS1v15(k.rsaPub, hash, h.Sum(nil), sig) == nil, nil
}

// crypt encrypts or decrypts with AES or RSA-OAEP.
func crypt(p *params, k *key, data []byte, seal bool) (any, error) {
	if k.alg.name == rsaOAEP {
		h := hashes[k.alg.hash].New()
		if seal {
			out, err := rsa.EncryptOAEP(h, rand.Reader, k.rsaPub, data, p.label)
			if err != nil {
				return nil, errorf("OperationError", "RSA-OAEP: %v", err)
			}
			return out, nil
		}
		out, err := rsa.DecryptOAEP(h, nil, k.rsaPriv, data, p.label)
		if err != nil {
			return nil, errorf("OperationError", "RSA-OAEP: the data could not be decrypted")
		}
		return out, nil
	}
	block, err := aes.NewCipher(k.secret)
	if err != nil {
		return nil, errorf("OperationError", "%s: %v", k.alg.name, err)
	}
	switch k.alg.name {
	case aesCBC:
		return cbc(block, p.iv, data, seal)
	case aesCTR:
		return ctr(block, p.iv, p.length, data)
	}
	return gcm(block, p, data, seal)
}

// cbc is AES-CBC with PKCS#7 padding.
func cbc(block cipher.Block, iv, data []byte, seal bool) ([]byte, error) {
	if len(iv) != aes.BlockSize {
		return nil, errorf("OperationError", "AES-CBC: the iv must be 16 bytes, not %d", len(iv))
	}
	if seal {
		pad := aes.BlockSize - len(data)%aes.BlockSize
		out := make([]byte, len(data)+pad)
		copy(out, data)
		for i := len(data); i < len(out); i++ {
			out[i] = byte(pad)
		}
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(out, out)
		return out, nil
	}
	if len(data) == 0 || len(data)%aes.BlockSize != 0 {
		return nil, errorf("OperationError", "AES-CBC: the data is not a whole number of blocks")
	}
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, data)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > aes.BlockSize {
		return nil, errorf("OperationError", "AES-CBC: invalid padding")
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, errorf("OperationError", "AES-CBC: invalid padding")
		}
	}
	return out[:len(out)-pad], nil
}

// ctr is AES-CTR where only the rightmost bits of the counter block
// count, wrapping around as WebCrypto says.
func ctr(block cipher.Block, counter []byte, bits int64, data []byte) ([]byte, error) {
	if len(counter) != aes.BlockSize {
		return nil, errorf("OperationError", "AES-CTR: the counter must be 16 bytes, not %d", len(counter))
	}
	if bits < 1 || bits > 128 {
		return nil, errorf("OperationError", "AES-CTR: the counter length must be 1 to 128 bits, not %d", bits)
	}
	blocks := (len(data) + aes.BlockSize - 1) / aes.BlockSize
	if bits < 64 && int64(blocks) > int64(1)<<bits {
		return nil, errorf("OperationError", "AES-CTR: the data needs %d blocks but a %d-bit counter has %d", blocks, bits, int64(1)<<bits)
	}
	mod := new(big.Int).Lsh(big.NewInt(1), uint(bits))
	whole := new(big.Int).SetBytes(counter)
	low := new(big.Int).Mod(whole, mod)
	high := new(big.Int).Sub(whole, low)
	out := make([]byte, len(data))
	var cb, ks [aes.BlockSize]byte
	one := big.NewInt(1)
	cur := new(big.Int)
	for i := 0; i < len(data); i += aes.BlockSize {
		cur.Add(high, low).FillBytes(cb[:])
		block.Encrypt(ks[:], cb[:])
		end := min(i+aes.BlockSize, len(data))
		subtle.XORBytes(out[i:end], data[i:end], ks[:end-i])
		low.Add(low, one).Mod(low, mod)
	}
	return out, nil
}

// gcm is AES-GCM with any iv length and tag lengths of 32 to 128 bits. GCM
// tags of fewer bits are the leading bits of the full tag, so a short tag
// is checked by sealing the recovered plaintext again.
func gcm(block cipher.Block, p *params, data []byte, seal bool) ([]byte, error) {
	switch p.tagLength {
	case 32, 64, 96, 104, 112, 120, 128:
	default:
		return nil, errorf("OperationError", "AES-GCM: the tag length must be 32, 64, 96, 104, 112, 120 or 128 bits, not %d", p.tagLength)
	}
	if len(p.iv) == 0 {
		return nil, errorf("OperationError", "AES-GCM: the iv is empty")
	}
	aead, err := cipher.NewGCMWithNonceSize(block, len(p.iv))
	if err != nil {
		return nil, errorf("OperationError", "AES-GCM: %v", err)
	}
	tag := int(p.tagLength / 8)
	if seal {
		out := aead.Seal(nil, p.iv, data, p.additionalData)
		return out[:len(out)-aead.Overhead()+tag], nil
	}
	if len(data) < tag {
		return nil, errorf("OperationError", "AES-GCM: the data is shorter than the tag")
	}
	body, got := data[:len(data)-tag], data[len(data)-tag:]
	if tag == aead.Overhead() {
		out, err := aead.Open(nil, p.iv, data, p.additionalData)
		if err != nil {
			return nil, errorf("OperationError", "AES-GCM: the data could not be decrypted")
		}
		return out, nil
	}
	// GCM encrypts with a keystream: sealing the ciphertext yields the
	// plaintext, and sealing that again yields the tag to compare.
	plain := aead.Seal(nil, p.iv, body, nil)[:len(body)]
	again := aead.Seal(nil, p.iv, plain, p.additionalData)
	if subtle.ConstantTimeCompare(again[len(body):len(body)+tag], got) != 1 {
		return nil, errorf("OperationError", "AES-GCM: the data could not be decrypted")
	}
	return plain, nil
}
