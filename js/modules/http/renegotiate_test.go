package http

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/config"
)

// TestServerRenegotiation answers a request from a TLS 1.2 server that
// renegotiates the connection before it answers, as the probe did with
// openssl s_server: k6 gets the answer (200 "ok"), metronome used to fail
// with "tls: no renegotiation". Go's TLS server cannot renegotiate, so
// the test needs openssl on PATH.
func TestServerRenegotiation(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl is not on PATH")
	}
	certFile, keyFile := selfSigned(t)
	cmd := exec.Command(openssl, "s_server", "-accept", "127.0.0.1:0", "-tls1_2", "-cert", certFile, "-key", keyFile,
		"-crlf", "-naccept", "1", "-state")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	addr := ""
	for addr == "" && lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "ACCEPT "); ok {
			addr = a
		}
	}
	if addr == "" {
		t.Fatal("openssl s_server did not say where it listens")
	}
	// Once the request arrives, renegotiate ("r"); once the new handshake
	// is done (s_server's -state says so), answer.
	served := make(chan error, 1)
	go func() {
		defer func() { _, _ = io.Copy(io.Discard, stdout) }()
		for lines.Scan() {
			switch l := lines.Text(); {
			case strings.HasPrefix(l, "GET "):
				if _, err := io.WriteString(stdin, "r\n"); err != nil {
					served <- err
					return
				}
			case strings.HasPrefix(l, "SSL_do_handshake -> "):
				_, err := io.WriteString(stdin, "HTTP/1.1 200 OK\nContent-Length: 2\nConnection: close\n\nok")
				served <- err
				return
			}
		}
		served <- fmt.Errorf("openssl s_server ended before it renegotiated: %v", lines.Err())
	}()
	e := newEnv(t, &config.Options{InsecureSkipTLSVerify: ptr(true)})
	v := e.run(fmt.Sprintf(`var r = http.get(%q, {timeout: "10s"}); JSON.stringify([r.status, r.error, r.body])`, "https://"+addr+"/x"))
	err = <-served
	if v.String() != `[200,"","ok"]` {
		t.Fatalf("renegotiating server: %s, k6 [200,\"\",\"ok\"]", v)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// selfSigned writes a certificate and key for 127.0.0.1 and returns their
// files.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
