package load

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHTTPS drives an https:// target over TLS: with the server's
// certificate trusted, or verification skipped, every request is served
// over HTTP/1.1 with TLS on keep-alive connections; with the system's roots
// alone the handshakes fail, counted as connect errors with a note saying
// why.
func TestHTTPS(t *testing.T) {
	var overTLS, requests atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.TLS != nil && r.ProtoMajor == 1 {
			overTLS.Add(1)
		}
		_, _ = io.WriteString(w, "hello")
	}))
	srv.EnableHTTP2 = true // the generator must still get HTTP/1.1
	srv.StartTLS()
	defer srv.Close()
	trusted := x509.NewCertPool()
	trusted.AddCert(srv.Certificate())

	tests := []struct {
		name    string
		tls     *tls.Config
		served  int64
		connect int64
		note    string
	}{
		{"trusted CA", &tls.Config{RootCAs: trusted}, 40, 0, ""},
		{"verification skipped", &tls.Config{InsecureSkipVerify: true}, 40, 0, ""},
		{"system roots", nil, 0, 40, "tls handshake with " + srv.Listener.Addr().String()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			overTLS.Store(0)
			requests.Store(0)
			res, err := Run(t.Context(), Config{
				Targets:     []Target{{URL: srv.URL + "/"}},
				Connections: 4,
				Requests:    40,
				TLS:         tc.tls,
				ExpectBody:  []byte("hello"),
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != tc.served || res.Errors.Connect != tc.connect || overTLS.Load() != tc.served {
				t.Errorf("served %d (%d over TLS, HTTP/1.1), connect errors %d; want %d, %d", res.Requests, overTLS.Load(), res.Errors.Connect, tc.served, tc.connect)
			}
			if tc.served > 0 && res.Connects > 4 {
				t.Errorf("%d connections for 4 keep-alive ones", res.Connects)
			}
			if tc.note != "" && (len(res.Limits) != 1 || !strings.Contains(res.Limits[0], tc.note)) {
				t.Errorf("limits %q; want a note containing %q", res.Limits, tc.note)
			}
		})
	}
}

// TestHTTPSDefaultPort: an https:// URL without a port dials 443 and
// names its host to TLS.
func TestHTTPSDefaultPort(t *testing.T) {
	req, err := buildRequest(Target{URL: "https://example.test/x"})
	if err != nil {
		t.Fatal(err)
	}
	if req.addr != "example.test:443" || !req.https || clientTLS(nil, req).ServerName != "example.test" {
		t.Errorf("got addr %q, https %v, server name %q; want example.test:443, true, example.test", req.addr, req.https, clientTLS(nil, req).ServerName)
	}
}

// TestHTTPSRefused: an HTTPS target whose port refuses is counted as
// refused, with no handshake tried on a connection that never opened.
func TestHTTPSRefused(t *testing.T) {
	url := "https://" + refusedAddr(t) + "/"
	res := mustRun(t, Config{Targets: []Target{{URL: url}}, Requests: 2})
	if res.Errors.Refused != 2 || res.Requests != 0 {
		t.Errorf("refused %d, served %d; want 2 and 0 (errors %+v)", res.Errors.Refused, res.Requests, res.Errors)
	}
}
