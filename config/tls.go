package config

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/metronome-load/metronome/optdecode"
)

// TLSVersions is the tlsVersion option: the lowest and highest TLS
// version a connection may use, by k6's names ("tls1.0" … "tls1.3"); ""
// leaves Go's default (TLS 1.2 to 1.3). In JSON it is {"min": …, "max": …}
// or one name that sets both.
type TLSVersions struct {
	Min string `json:"min"`
	Max string `json:"max"`
}

// TLSAuth is one client certificate of the tlsAuth option: the
// certificate chain and its private key in PEM, the password of a key
// encrypted the legacy PEM way, and the domains k6 lists it for. As in
// k6, domains choose nothing: a connection offers the first certificate
// whose issuer the server asks for (see Options.TLSConfig).
type TLSAuth struct {
	Cert     string   `json:"cert"`
	Key      string   `json:"key"`
	Password *string  `json:"password"`
	Domains  []string `json:"domains"`

	// cert is Cert and Key parsed when the option was checked, shared by
	// the copies Apply makes.
	cert *tls.Certificate
}

// tlsVersions maps k6's names of the TLS versions to Go's.
var tlsVersions = map[string]uint16{
	"tls1.0": tls.VersionTLS10,
	"tls1.1": tls.VersionTLS11,
	"tls1.2": tls.VersionTLS12,
	"tls1.3": tls.VersionTLS13,
}

// cipherSuites maps k6's names of the cipher suites to their IDs: Go's
// names, but for the two ECDHE CHACHA20_POLY1305 suites, which k6 names
// without the _SHA256 Go added later.
var cipherSuites, cipherSuiteNames = func() (map[string]uint16, map[uint16]string) {
	byName, byID := map[string]uint16{}, map[uint16]string{}
	for _, c := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		name := c.Name
		switch c.ID {
		case tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256:
			name = strings.TrimSuffix(name, "_SHA256")
		}
		byName[name], byID[c.ID] = c.ID, name
	}
	return byName, byID
}()

// CipherSuiteName is k6's name of a cipher suite (res.tls_cipher_suite),
// "" for one k6 does not know.
func CipherSuiteName(id uint16) string { return cipherSuiteNames[id] }

// CipherSuiteNames lists k6's names of the cipher suites tlsCipherSuites
// takes, sorted.
func CipherSuiteNames() []string { return optdecode.SortedKeys(cipherSuites) }

// TLSConfig returns the TLS settings of the test's connections — HTTP,
// WebSocket and gRPC — as k6 makes them from insecureSkipTLSVerify,
// tlsVersion, tlsCipherSuites and tlsAuth. A TLS 1.2 server may ask to
// renegotiate (for a client certificate, say), and k6 goes along. Each call
// returns a new Config the caller may change; o may be nil.
//
// The client certificates are Go's Certificates: a connection offers the
// first one whose key the server can verify and whose issuer is among the
// authorities the server names (any, when it names none), and none when no
// certificate fits. k6 hands tlsAuth's domains to Go's NameToCertificate,
// which only servers read, so neither program looks at the host.
func (o *Options) TLSConfig() *tls.Config {
	cfg := &tls.Config{Renegotiation: tls.RenegotiateFreelyAsClient}
	if o == nil {
		return cfg
	}
	cfg.InsecureSkipVerify = o.InsecureSkipTLSVerify != nil && *o.InsecureSkipTLSVerify //nolint:gosec // the user asked for it
	if v := o.TLSVersion; v != nil {
		cfg.MinVersion, cfg.MaxVersion = tlsVersions[v.Min], tlsVersions[v.Max]
	}
	for _, name := range o.TLSCipherSuites {
		cfg.CipherSuites = append(cfg.CipherSuites, cipherSuites[name])
	}
	for i := range o.TLSAuth {
		if c, err := o.TLSAuth[i].certificate(); err == nil {
			cfg.Certificates = append(cfg.Certificates, *c)
		}
	}
	return cfg
}

// certificate returns the parsed certificate, parsing it when the option
// was never checked (options built in code).
func (a *TLSAuth) certificate() (*tls.Certificate, error) {
	if a.cert != nil {
		return a.cert, nil
	}
	return ParseKeyPair(a.Cert, a.Key, a.Password)
}

// ParseKeyPair parses a PEM certificate chain and its private key as k6's
// tlsAuth and gRPC's connect() do: with a password, the key must be
// encrypted the legacy PEM way (RFC 1423, "Proc-Type: 4,ENCRYPTED"), which
// is decrypted first; an encrypted PKCS #8 key is refused. The errors are
// k6's, which are Go's.
func ParseKeyPair(certPEM, keyPEM string, password *string) (*tls.Certificate, error) {
	key := []byte(keyPEM)
	if password != nil {
		var err error
		if key, err = DecryptPEMKey(key, []byte(*password)); err != nil {
			return nil, err
		}
	}
	c, err := tls.X509KeyPair([]byte(certPEM), key)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// DecryptPEMKey decrypts a private key encrypted the legacy PEM way and
// returns it as PEM of the same type.
func DecryptPEMKey(keyPEM, password []byte) ([]byte, error) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New("failed to decode PEM key")
	}
	if block.Type == "ENCRYPTED PRIVATE KEY" {
		return nil, errors.New("encrypted pkcs8 formatted key is not supported")
	}
	// The legacy encryption is weak, which is why Go deprecated it; it is
	// what the option takes, so it is what is read.
	der, err := x509.DecryptPEMBlock(block, password) //nolint:staticcheck // see above
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: der}), nil
}

// decodeTLSVersions reads tlsVersion: one version name or {min, max}.
func decodeTLSVersions(path string, raw json.RawMessage) (TLSVersions, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return TLSVersions{Min: one, Max: one}, nil
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return TLSVersions{}, optdecode.Errorf(path, "expected a TLS version such as \"tls1.2\" or {min, max}, got %s", describe(raw))
	}
	fields, err := optdecode.Object(path, raw, "min", "max")
	if err != nil {
		return TLSVersions{}, err
	}
	var v TLSVersions
	for _, f := range []struct {
		key string
		dst *string
	}{{"min", &v.Min}, {"max", &v.Max}} {
		if raw, ok := fields[f.key]; ok && !isNull(raw) {
			if *f.dst, err = optdecode.String(path+"."+f.key, raw); err != nil {
				return TLSVersions{}, err
			}
		}
	}
	return v, nil
}

// decodeTLSAuth reads tlsAuth: an array of {cert, key, password,
// domains}.
func decodeTLSAuth(path string, raw json.RawMessage) ([]TLSAuth, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, optdecode.Errorf(path, "expected an array of {cert, key, password, domains}, got %s", describe(raw))
	}
	out := make([]TLSAuth, len(items))
	for i, it := range items {
		if err := optdecode.Strict(fmt.Sprintf("%s[%d]", path, i), it, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func checkTLSVersions(v any) error {
	tv := v.(TLSVersions)
	for _, f := range []struct{ sub, name string }{{".min", tv.Min}, {".max", tv.Max}} {
		if _, ok := tlsVersions[f.name]; !ok && f.name != "" {
			if tv.Min == tv.Max {
				return fmt.Errorf("unknown TLS version %q; use tls1.0, tls1.1, tls1.2 or tls1.3", f.name)
			}
			return at(f.sub, "unknown TLS version %q; use tls1.0, tls1.1, tls1.2 or tls1.3", f.name)
		}
	}
	return nil
}

func checkCipherSuites(v any) error {
	for i, name := range v.([]string) {
		if _, ok := cipherSuites[name]; !ok {
			return at(fmt.Sprintf("[%d]", i), "unknown cipher suite %q; the names are Go's, such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (k6 writes TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305 without _SHA256)", name)
		}
	}
	return nil
}

// checkTLSAuth parses every certificate and key, keeping the result for
// TLSConfig, so that a bad one stops the test before it starts, as in k6.
func checkTLSAuth(v any) error {
	auths := v.([]TLSAuth)
	for i := range auths {
		if auths[i].cert != nil {
			continue
		}
		c, err := ParseKeyPair(auths[i].Cert, auths[i].Key, auths[i].Password)
		if err != nil {
			return at(fmt.Sprintf("[%d]", i), "%v", err)
		}
		auths[i].cert = c
	}
	return nil
}

// cipherSuitesText lets K6_TLS_CIPHER_SUITES list numeric suite IDs, the
// only form k6 reads there (49199 is TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
// as well as names.
func cipherSuitesText(s string) string {
	items := SplitList(s)
	for i, it := range items {
		if id, err := strconv.ParseUint(it, 10, 16); err == nil {
			if name, ok := cipherSuiteNames[uint16(id)]; ok {
				items[i] = name
			}
		}
	}
	return strings.Join(items, ",")
}

// tlsWarnings are the notes on TLS options that do less than they seem
// to: tlsAuth domains, which choose nothing, and a version range no
// connection can satisfy.
func tlsWarnings(o *Options) []string {
	var out []string
	if slices.ContainsFunc(o.TLSAuth, func(a TLSAuth) bool { return len(a.Domains) > 0 }) {
		out = append(out, "options.tlsAuth: domains choose nothing, in k6 as here: a connection offers the first certificate whose issuer the server accepts, whatever its host")
	}
	if v := o.TLSVersion; v != nil {
		lo, hi := tlsVersions[v.Min], tlsVersions[v.Max]
		if lo == 0 {
			lo = tls.VersionTLS12
		}
		if hi == 0 {
			hi = tls.VersionTLS13
		}
		if lo > hi {
			out = append(out, fmt.Sprintf("options.tlsVersion: no version is at least %s and at most %s, so every TLS connection will fail with \"tls: no supported versions satisfy MinVersion and MaxVersion\", as in k6",
				versionName(lo), versionName(hi)))
		}
	}
	return out
}

func versionName(v uint16) string {
	for name, id := range tlsVersions {
		if id == v {
			return name
		}
	}
	return strconv.Itoa(int(v))
}
