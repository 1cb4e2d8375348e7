package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/metronome-load/metronome/exitcode"
	"github.com/metronome-load/metronome/internal/testkit/tlstest"
)

// jsonString quotes s for a JSON document.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The TLS options read as k6 v2.2.0 reads them: tlsVersion as one name or
// {min, max}, tlsCipherSuites by k6's names, tlsAuth's certificates and
// keys (encrypted ones with their password) parsed before the test starts.
func TestTLSOptions(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	a := ca.Issue(t, tlstest.Spec{CommonName: "client-a", Client: true})
	b := ca.Issue(t, tlstest.Spec{CommonName: "client-b", Client: true, RSA: true})
	src := `{"tlsVersion": {"min": "tls1.2"}, "insecureSkipTLSVerify": true,
		"tlsCipherSuites": ["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "TLS_RSA_WITH_AES_128_CBC_SHA", "TLS_AES_128_GCM_SHA256"],
		"tlsAuth": [{"cert": ` + jsonString(a.CertPEM) + `, "key": ` + jsonString(a.EncryptedKeyPEM(t, "secret")) + `, "password": "secret"},
			{"cert": ` + jsonString(b.CertPEM) + `, "key": ` + jsonString(b.KeyPEM) + `, "domains": []}]}`
	o, err := Parse([]byte(src), "script options")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Consolidate(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings %q", c.Warnings)
	}
	cfg := c.TLSConfig()
	if cfg.MinVersion != tls.VersionTLS12 || cfg.MaxVersion != 0 || !cfg.InsecureSkipVerify || cfg.Renegotiation != tls.RenegotiateFreelyAsClient {
		t.Errorf("config %+v", cfg)
	}
	if want := []uint16{tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_RSA_WITH_AES_128_CBC_SHA, tls.TLS_AES_128_GCM_SHA256}; !slices.Equal(cfg.CipherSuites, want) {
		t.Errorf("cipher suites %v, want %v", cfg.CipherSuites, want)
	}
	if len(cfg.Certificates) != 2 || cfg.Certificates[0].Leaf.Subject.CommonName != "client-a" || cfg.Certificates[1].Leaf.Subject.CommonName != "client-b" {
		t.Fatalf("certificates %+v", cfg.Certificates)
	}
	// Parsed once, when the options were checked: the consolidated copy
	// shares the result.
	if o.TLSAuth[0].cert == nil || c.TLSAuth[0].cert != o.TLSAuth[0].cert {
		t.Error("the certificate was not parsed once and shared")
	}
	if cfg2 := c.TLSConfig(); &cfg2.Certificates[0] == &cfg.Certificates[0] || cfg2 == cfg {
		t.Error("TLSConfig returned shared state")
	}

	// exec.test.options, inspect and archives see k6's JSON, which reads back.
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"tlsVersion":{"min":"tls1.2","max":""}`, `"password":"secret","domains":null}`, `"password":null,"domains":[]}`,
		`"tlsCipherSuites":["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305","TLS_RSA_WITH_AES_128_CBC_SHA","TLS_AES_128_GCM_SHA256"]`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("JSON lacks %s:\n%s", want, raw)
		}
	}
	back, err := Parse(raw, "archive")
	if err != nil {
		t.Fatal(err)
	}
	if *back.TLSVersion != *c.TLSVersion || !slices.Equal(back.TLSCipherSuites, c.TLSCipherSuites) || len(back.TLSAuth) != 2 || *back.TLSAuth[0].Password != "secret" {
		t.Errorf("read back %+v", back)
	}

	for _, v := range []struct{ json, min, max string }{
		{`"tls1.3"`, "tls1.3", "tls1.3"},
		{`""`, "", ""},
		{`{"max": "tls1.2"}`, "", "tls1.2"},
		{`{"min": null, "max": "tls1.3"}`, "", "tls1.3"},
	} {
		o, err := Parse([]byte(`{"tlsVersion": `+v.json+`}`), "script options")
		if err != nil || o.TLSVersion.Min != v.min || o.TLSVersion.Max != v.max {
			t.Errorf("tlsVersion %s: %+v, %v", v.json, o.TLSVersion, err)
		}
	}
	if o, err := Parse([]byte(`{"tlsVersion": null, "tlsCipherSuites": [], "tlsAuth": null}`), "script options"); err != nil ||
		o.TLSVersion != nil || o.TLSAuth != nil || o.TLSConfig().CipherSuites != nil {
		t.Errorf("null and empty: %+v %v", o, err)
	}
}

// A bad value stops the test before it starts with exit code 104, naming
// the option path and saying, in k6's words where k6 has some (they are
// Go's), what is wrong.
func TestTLSOptionErrors(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	a := ca.Issue(t, tlstest.Spec{CommonName: "client-a", Client: true})
	b := ca.Issue(t, tlstest.Spec{CommonName: "client-b", Client: true, RSA: true})
	pkcs8 := string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte("not really")}))
	auth := func(cert, key string, rest string) string {
		return `{"tlsAuth": [{"cert": ` + jsonString(cert) + `, "key": ` + jsonString(key) + rest + `}]}`
	}
	for _, c := range []struct{ json, want string }{
		{`{"tlsVersion": "tls1.4"}`, `options.tlsVersion: unknown TLS version "tls1.4"; use tls1.0, tls1.1, tls1.2 or tls1.3`},
		{`{"tlsVersion": {"min": "tls1.5"}}`, `options.tlsVersion.min: unknown TLS version "tls1.5"`},
		{`{"tlsVersion": {"min": "tls1.2", "max": "TLS1.3"}}`, `options.tlsVersion.max: unknown TLS version "TLS1.3"`},
		{`{"tlsVersion": {"mini": "tls1.2"}}`, `options.tlsVersion.mini: unknown option; use min, max`},
		{`{"tlsVersion": 12}`, `options.tlsVersion: expected a TLS version such as "tls1.2" or {min, max}, got 12`},
		{`{"tlsVersion": ["tls1.2"]}`, `options.tlsVersion: expected a TLS version such as "tls1.2" or {min, max}, got`},
		{`{"tlsVersion": {"min": 2}}`, `options.tlsVersion.min: expected a string, got 2`},
		{`{"tlsCipherSuites": ["TLS_AES_128_GCM_SHA256", "TLS_FOO"]}`, `options.tlsCipherSuites[1]: unknown cipher suite "TLS_FOO"`},
		// Go's newer name of a suite k6 names the old way.
		{`{"tlsCipherSuites": ["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"]}`, `options.tlsCipherSuites[0]: unknown cipher suite "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"`},
		{`{"tlsCipherSuites": "TLS_AES_128_GCM_SHA256"}`, `options.tlsCipherSuites: expected an array of strings`},
		{`{"tlsCipherSuites": [1]}`, `options.tlsCipherSuites[0]: expected a string, got 1`},
		{`{"tlsAuth": {}}`, `options.tlsAuth: expected an array of {cert, key, password, domains}, got an object`},
		{`{"tlsAuth": [{}]}`, `options.tlsAuth[0]: tls: failed to find any PEM data in certificate input`},
		{`{"tlsAuth": [{"cert": "x", "key": "y", "foo": 1}]}`, `options.tlsAuth[0].foo: unknown option; use cert, key, password, domains`},
		{`{"tlsAuth": [{"cert": 1, "key": "y"}]}`, `options.tlsAuth[0].cert: expected a string, got 1`},
		{`{"tlsAuth": [{"cert": "x", "key": "y", "domains": "a"}]}`, `options.tlsAuth[0].domains: expected an array, got "a"`},
		{`{"tlsAuth": [{"cert": "x", "key": "y", "password": "p"}]}`, `options.tlsAuth[0]: failed to decode PEM key`},
		{auth(a.CertPEM, b.KeyPEM, ""), `options.tlsAuth[0]: tls: private key type does not match public key type`},
		{auth(a.CertPEM, a.EncryptedKeyPEM(t, "secret", "wrong"), `, "password": "wrong"`), `options.tlsAuth[0]: x509: decryption password incorrect`},
		{auth(a.CertPEM, a.EncryptedKeyPEM(t, "secret", ""), `, "password": ""`), `options.tlsAuth[0]: x509: decryption password incorrect`},
		{auth(a.CertPEM, a.EncryptedKeyPEM(t, "secret"), ""), `options.tlsAuth[0]: tls: failed to parse private key`},
		{auth(a.CertPEM, a.KeyPEM, `, "password": "secret"`), `options.tlsAuth[0]: x509: no DEK-Info header in block`},
		{auth(a.CertPEM, pkcs8, `, "password": "secret"`), `options.tlsAuth[0]: encrypted pkcs8 formatted key is not supported`},
		{auth(a.KeyPEM, a.KeyPEM, ""), `options.tlsAuth[0]: tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched`},
		{auth(a.CertPEM, a.CertPEM, ""), `options.tlsAuth[0]: tls: found a certificate rather than a key in the PEM for the private key`},
	} {
		_, err := Parse([]byte(c.json), "script options")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80s: error %v\nwant it to contain %q", c.json, err, c.want)
			continue
		}
		if code := exitcode.Of(err); code != exitcode.InvalidConfig {
			t.Errorf("%.80s: exit code %d, want 104", c.json, code)
		}
	}
}

// K6_TLS_CIPHER_SUITES takes k6's numeric suite IDs and names; k6 reads
// neither tlsVersion nor (usefully) tlsAuth from the environment.
func TestTLSCipherSuitesFromEnv(t *testing.T) {
	o, err := FromEnv(map[string]string{"K6_TLS_CIPHER_SUITES": "49199, TLS_AES_128_GCM_SHA256,52392", "K6_TLS_VERSION": "tls1.3", "K6_TLSAUTH": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"}; !slices.Equal(o.TLSCipherSuites, want) {
		t.Errorf("suites %q, want %q", o.TLSCipherSuites, want)
	}
	if o.TLSVersion != nil || o.TLSAuth != nil {
		t.Errorf("read K6_TLS_VERSION or K6_TLSAUTH: %+v", o)
	}
	_, err = FromEnv(map[string]string{"K6_TLS_CIPHER_SUITES": "foo"})
	if err == nil || !strings.Contains(err.Error(), `K6_TLS_CIPHER_SUITES: unknown cipher suite "foo"`) || exitcode.Of(err) != exitcode.InvalidConfig {
		t.Errorf("a bad K6_TLS_CIPHER_SUITES: %v", err)
	}
}

// tlsAuth's domains choose nothing (k6 hands them to a field only Go's
// servers read), and a version range no connection can use fails every
// TLS request: both get a warning rather than silence.
func TestTLSWarnings(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	a := ca.Issue(t, tlstest.Spec{CommonName: "client-a", Client: true})
	for _, c := range []struct {
		json string
		want []string
	}{
		{`{"tlsAuth": [{"cert": ` + jsonString(a.CertPEM) + `, "key": ` + jsonString(a.KeyPEM) + `, "domains": ["example.com"]}]}`,
			[]string{"options.tlsAuth: domains choose nothing, in k6 as here: a connection offers the first certificate whose issuer the server accepts, whatever its host"}},
		{`{"tlsVersion": {"min": "tls1.3", "max": "tls1.2"}}`,
			[]string{`options.tlsVersion: no version is at least tls1.3 and at most tls1.2, so every TLS connection will fail with "tls: no supported versions satisfy MinVersion and MaxVersion", as in k6`}},
		{`{"tlsVersion": {"max": "tls1.1"}}`, []string{`options.tlsVersion: no version is at least tls1.2 and at most tls1.1`}},
		{`{"tlsVersion": {"min": "tls1.0", "max": "tls1.1"}}`, nil},
		{`{"tlsVersion": "tls1.3"}`, nil},
	} {
		o, err := Parse([]byte(c.json), "script options")
		if err != nil {
			t.Fatal(err)
		}
		r, err := Consolidate(o)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Warnings) != len(c.want) {
			t.Errorf("%.60s: warnings %q, want %q", c.json, r.Warnings, c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(r.Warnings[i], w) {
				t.Errorf("%.60s: warning %q, want %q", c.json, r.Warnings[i], w)
			}
		}
	}
}

// The cipher suites are the 25 k6 v2.2.0 names, which are Go's but for
// the two ECDHE CHACHA20_POLY1305 suites; res.tls_cipher_suite uses them.
func TestCipherSuiteNames(t *testing.T) {
	k6 := []string{
		"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
		"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
		"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
		"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
		"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
		"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
		"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "TLS_RSA_WITH_AES_128_CBC_SHA", "TLS_RSA_WITH_AES_128_CBC_SHA256",
		"TLS_RSA_WITH_AES_128_GCM_SHA256", "TLS_RSA_WITH_AES_256_CBC_SHA", "TLS_RSA_WITH_AES_256_GCM_SHA384", "TLS_RSA_WITH_RC4_128_SHA",
	}
	if got := CipherSuiteNames(); !slices.Equal(got, k6) {
		t.Errorf("names %q\nwant %q", got, k6)
	}
	if got := CipherSuiteName(tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256); got != "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305" {
		t.Errorf("name %q", got)
	}
	if got := CipherSuiteName(0xffff); got != "" {
		t.Errorf("an unknown suite is named %q", got)
	}
}

// ParseKeyPair's errors are the values of errors k6 returns, so callers can
// tell them apart as k6 can.
func TestDecryptPEMKey(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	a := ca.Issue(t, tlstest.Spec{CommonName: "client-a", Client: true})
	key, err := DecryptPEMKey([]byte(a.EncryptedKeyPEM(t, "pw")), []byte("pw"))
	if err != nil || string(key) != a.KeyPEM {
		t.Errorf("decrypted %q, %v", key, err)
	}
	pw := "nope"
	if _, err := ParseKeyPair(a.CertPEM, a.EncryptedKeyPEM(t, "pw", pw), &pw); !errors.Is(err, x509.IncorrectPasswordError) {
		t.Errorf("wrong password: %v", err)
	}
}
