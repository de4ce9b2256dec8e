package web

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
)

// WithTLS serves HTTPS with the certificate chain in certFile and its
// private key in keyFile, both PEM, as http.Server.ServeTLS reads them. New
// reads both files and returns an error naming the file that cannot be read
// or the pair that does not match (an empty name is an error too, not
// cleartext); the files are not read again, so a
// renewed certificate takes a restart (or WithTLSConfig with a
// GetCertificate that reloads it). HTTP/2 is offered by ALPN beside
// HTTP/1.1, as net/http offers it. Only the std engine serves TLS: Serve
// refuses to start on another. It applies to New.
func WithTLS(certFile, keyFile string) AppOption {
	return appOption(func(a *appSettings) { a.certFile, a.keyFile, a.tlsFiles = certFile, keyFile, true })
}

// WithTLSConfig serves HTTPS as c says: its Certificates, GetCertificate or
// GetConfigForClient must give a certificate (with WithTLS, its pair is added
// to c's Certificates). New keeps a copy of c. Protocols in c's NextProtos
// are preferred in their order, and net/http adds "h2" and "http/1.1" after
// them when missing, so NextProtos cannot leave HTTP/2 out: WithServerConfig
// setting http.Server.Protocols does. A nil c serves cleartext. It applies
// to New.
func WithTLSConfig(c *tls.Config) AppOption {
	return appOption(func(a *appSettings) { a.tlsConfig = c })
}

// WithH2C serves HTTP/2 without TLS to clients that open with HTTP/2's
// preface ("prior knowledge"), beside HTTP/1.1, through
// http.Server.Protocols. Use it behind a proxy that speaks HTTP/2 to its
// backends in cleartext (Envoy, a gRPC-aware load balancer); a browser
// never speaks it. Over TLS it changes nothing. Only the std engine serves
// it: Serve refuses to start on nbio. It applies to New.
func WithH2C() AppOption {
	return appOption(func(a *appSettings) { a.h2c = true })
}

// serverTLS returns the TLS configuration WithTLS and WithTLSConfig ask
// for, nil for cleartext, or an error naming what cannot be loaded.
func serverTLS(a appSettings) (*tls.Config, error) {
	if a.tlsConfig == nil && !a.tlsFiles {
		return nil, nil
	}
	c := &tls.Config{}
	if a.tlsConfig != nil {
		c = a.tlsConfig.Clone()
	}
	if a.tlsFiles {
		cert, err := loadKeyPair(a.certFile, a.keyFile)
		if err != nil {
			return nil, err
		}
		c.Certificates = append(c.Certificates, cert)
	}
	if len(c.Certificates) == 0 && c.GetCertificate == nil && c.GetConfigForClient == nil {
		return nil, fmt.Errorf("web: TLS configuration has no certificate (Certificates, GetCertificate or GetConfigForClient)")
	}
	return c, nil
}

// loadKeyPair reads a PEM certificate chain and key, and says which file
// is at fault.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	if certFile == "" || keyFile == "" {
		return tls.Certificate{}, fmt.Errorf("web: TLS needs both a certificate file and a key file (got %q and %q)", certFile, keyFile)
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("web: TLS certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("web: TLS key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("web: TLS certificate %s with key %s: %w", certFile, keyFile, err)
	}
	return cert, nil
}

// protocols returns the protocols srv serves when the App asks for h2c,
// nil to keep net/http's default (HTTP/1.1, and HTTP/2 over TLS).
func (a *App) protocols() *http.Protocols {
	if !a.settings.h2c {
		return nil
	}
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// tlsServer serves an http.Server over TLS: ServeTLS wraps the listener
// and sets HTTP/2 up, as the server's TLSConfig and Protocols say.
type tlsServer struct{ *http.Server }

func (s tlsServer) Serve(ln net.Listener) error { return s.ServeTLS(ln, "", "") }

// servesHTTP2 reports whether srv may serve HTTP/2: over TLS unless its
// Protocols leave HTTP/2 out, or in cleartext when they let it in.
func servesHTTP2(srv *http.Server) bool {
	if srv.TLSConfig != nil {
		return srv.Protocols == nil || srv.Protocols.HTTP2()
	}
	return srv.Protocols != nil && srv.Protocols.UnencryptedHTTP2()
}
