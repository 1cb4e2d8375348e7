package grpc

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// tlsParam is connect's tls param as k6 v2.2.0 takes it: a client
// certificate and key in PEM, the password of a key encrypted the legacy
// PEM way, and authorities to trust besides the system's. Other keys are
// ignored, as in k6.
type tlsParam struct {
	cert, key, password string
	cacerts             []string
}

// tlsParam reads connect's tls param; an empty object is none, as in k6.
func (c *client) tlsParam(v sobek.Value) *tlsParam {
	rt := c.m.rt
	if jsmod.Absent(v) {
		return nil
	}
	if _, ok := v.Export().(map[string]any); !ok {
		jsmod.ThrowTypeError(rt, "client.connect's tls param must be an object with (optional) keys cert, key, password and cacerts, not %s", jsmod.Describe(v))
	}
	o := v.ToObject(rt)
	if len(o.Keys()) == 0 {
		return nil
	}
	p := &tlsParam{}
	str := func(key, what string) string {
		x := o.Get(key)
		if x == nil {
			return ""
		}
		if _, ok := x.Export().(string); !ok {
			jsmod.ThrowTypeError(rt, "client.connect's tls.%s must be %s, not %s", key, what, jsmod.Describe(x))
		}
		return x.String()
	}
	p.cert = str("cert", "a PEM string")
	p.key = str("key", "a PEM string")
	p.password = str("password", "a string")
	if x := o.Get("cacerts"); x != nil {
		switch ca := x.Export().(type) {
		case string:
			p.cacerts = []string{ca}
		case []any:
			for _, e := range ca {
				s, ok := e.(string)
				if !ok {
					jsmod.ThrowTypeError(rt, "client.connect's tls.cacerts must be a PEM string or an array of them, not %s", jsmod.Describe(x))
				}
				p.cacerts = append(p.cacerts, s)
			}
		default:
			jsmod.ThrowTypeError(rt, "client.connect's tls.cacerts must be a PEM string or an array of them, not %s", jsmod.Describe(x))
		}
	}
	return p
}

// config is the TLS of a connection: the test's (base, from the options)
// without a tls param. With one it is k6's: the options' verification,
// versions, cipher suites and renegotiation, but only the param's
// certificate (not tlsAuth's; none unless both cert and key are given),
// and cacerts, when given, trusted beside the system's authorities.
func (p *tlsParam) config(base *tls.Config) (*tls.Config, error) {
	if p == nil {
		return base, nil
	}
	cfg := &tls.Config{
		CipherSuites:       base.CipherSuites,
		InsecureSkipVerify: base.InsecureSkipVerify, //nolint:gosec // the user asked for it
		MinVersion:         base.MinVersion,
		MaxVersion:         base.MaxVersion,
		Renegotiation:      base.Renegotiation,
	}
	key := []byte(p.key)
	if p.password != "" {
		var err error
		if key, err = config.DecryptPEMKey(key, []byte(p.password)); err != nil {
			return nil, err
		}
	}
	if len(p.cacerts) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		for i, ca := range p.cacerts {
			if !pool.AppendCertsFromPEM([]byte(ca)) {
				return nil, fmt.Errorf("failed to append ca certificate [%d] from PEM", i)
			}
		}
		cfg.RootCAs = pool
	}
	if p.cert != "" && len(key) > 0 {
		c, err := tls.X509KeyPair([]byte(p.cert), key)
		if err != nil {
			return nil, fmt.Errorf("failed to append certificate from PEM: %w", err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg, nil
}
