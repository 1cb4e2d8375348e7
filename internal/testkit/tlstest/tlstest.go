// Package tlstest makes certificates at test time: an authority, server
// certificates for the loopback addresses, client certificates, and their
// keys in PEM as scripts hand them to tlsAuth (encrypted too), so that TLS
// and mutual-TLS tests need no files and nothing expires in the tree.
package tlstest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"
)

// CA is a certificate authority made for one test.
type CA struct {
	Cert *x509.Certificate
	// PEM is Cert in PEM, as gRPC's cacerts takes it.
	PEM string
	key crypto.Signer
}

// Pair is a certificate the CA issued and its private key.
type Pair struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// CertPEM and KeyPEM are the certificate and its unencrypted key in
	// PEM (PKCS #1 for RSA, SEC 1 for ECDSA), as tlsAuth takes them.
	CertPEM, KeyPEM string
	// TLS is the pair for a tls.Config.
	TLS tls.Certificate
}

// Spec says what certificate Issue makes.
type Spec struct {
	CommonName string
	// Client makes a client certificate; otherwise one for a server at
	// 127.0.0.1, ::1 and localhost.
	Client bool
	// RSA gives it a 2048-bit RSA key (for the TLS_ECDHE_RSA_* suites);
	// otherwise the key is ECDSA P-256.
	RSA bool
}

// NewCA makes a self-signed authority named name, valid from an hour ago
// for a day.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t, false)
	tmpl := template(name)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	cert := create(t, tmpl, tmpl, key, key)
	return &CA{Cert: cert, PEM: certPEM(cert), key: key}
}

// Pool is a pool holding only the authority, for a server's ClientCAs or a
// client's RootCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Issue makes a certificate the authority signs.
func (ca *CA) Issue(t testing.TB, s Spec) *Pair {
	t.Helper()
	key := newKey(t, s.RSA)
	tmpl := template(s.CommonName)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	if s.Client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		tmpl.DNSNames = []string{"localhost"}
	}
	cert := create(t, tmpl, ca.Cert, key, ca.key)
	var keyDER []byte
	var keyType string
	switch k := key.(type) {
	case *rsa.PrivateKey:
		keyDER, keyType = x509.MarshalPKCS1PrivateKey(k), "RSA PRIVATE KEY"
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, keyType = der, "EC PRIVATE KEY"
	}
	return &Pair{
		Cert: cert, Key: key,
		CertPEM: certPEM(cert),
		KeyPEM:  string(pem.EncodeToMemory(&pem.Block{Type: keyType, Bytes: keyDER})),
		TLS:     tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert},
	}
}

// EncryptedKeyPEM is the key encrypted with password the legacy PEM way
// (RFC 1423, AES-256-CBC), the only encryption tlsAuth's password reads.
// Such a key tells a wrong password only by its padding, which about one
// random IV in 256 passes (the key then fails to parse instead), so it is
// encrypted again until each of the wrong passwords a test will try is
// refused as incorrect.
func (p *Pair) EncryptedKeyPEM(t testing.TB, password string, wrong ...string) string {
	t.Helper()
	block, _ := pem.Decode([]byte(p.KeyPEM))
	for range 32 {
		//nolint:staticcheck // the legacy encryption is what the option takes
		enc, err := x509.EncryptPEMBlock(rand.Reader, block.Type, block.Bytes, []byte(password), x509.PEMCipherAES256)
		if err != nil {
			t.Fatal(err)
		}
		if refusesAll(enc, wrong) {
			return string(pem.EncodeToMemory(enc))
		}
	}
	t.Fatalf("no encryption of the key refused all of %q", wrong)
	return ""
}

// refusesAll reports whether decrypting enc with each of passwords fails
// as an incorrect password.
func refusesAll(enc *pem.Block, passwords []string) bool {
	for _, pw := range passwords {
		//nolint:staticcheck // the legacy encryption is what the option takes
		if _, err := x509.DecryptPEMBlock(enc, []byte(pw)); !errors.Is(err, x509.IncorrectPasswordError) {
			return false
		}
	}
	return true
}

func newKey(t testing.TB, rsaKey bool) crypto.Signer {
	t.Helper()
	var key crypto.Signer
	var err error
	if rsaKey {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func template(cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
	}
}

func create(t testing.TB, tmpl, parent *x509.Certificate, key, parentKey crypto.Signer) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func certPEM(c *x509.Certificate) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}
