package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/letsencrypt/challtestsrv"
	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"go.uber.org/goleak"
	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"github.com/loomrt/loom/internal/harness/cmdtest"
	"github.com/loomrt/loom/web"
)

func TestMain(m *testing.M) {
	// Pebble's validation authority runs a goroutine for the life of the
	// process, with no way to stop it.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/letsencrypt/pebble/v2/va.VAImpl.processTasks"))
}

// pebble runs Pebble, Let's Encrypt's test CA, in the test process: its
// ACME server on a TLS loopback port, and a validation authority that
// checks TLS-ALPN-01 challenges by connecting to port tlsPort of the
// domain, as Let's Encrypt connects to a domain's port 443. Every domain
// resolves to 127.0.0.1, through Pebble's test DNS server. It returns the
// directory URL, a client that trusts the ACME server, and the root that
// issued certificates chain to.
func pebble(t *testing.T, tlsPort int) (directory string, client *http.Client, root *x509.Certificate) {
	t.Helper()
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	logger := log.New(io.Discard, "", 0)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dnsAddr := free.Addr().String()
	free.Close()
	dns, err := challtestsrv.New(challtestsrv.Config{DNSAddrs: []string{dnsAddr}, Log: logger})
	if err != nil {
		t.Fatal(err)
	}
	dns.SetDefaultDNSIPv6("") // A records only: the app listens on 127.0.0.1
	dns.Run()
	t.Cleanup(dns.Shutdown)

	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {ValidityPeriod: 86400}})
	validation := va.New(logger, 0, tlsPort, false, dnsAddr, store)
	front := wfe.New(logger, store, validation, authority, nil, false, false, 0, 0)
	srv := httptest.NewTLSServer(front.Handler())
	t.Cleanup(srv.Close)
	return srv.URL + wfe.DirectoryPath, srv.Client(), authority.GetRootCert(0).Cert
}

// TestCertificateFromACME serves the app with an autocert.Manager whose CA
// is Pebble: the first handshake for loom.test makes the manager order a
// certificate, Pebble validates the TLS-ALPN-01 challenge by connecting to
// the app itself, and the client gets a certificate that chains to
// Pebble's root, over HTTP/2.
func TestCertificateFromACME(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	directory, acmeClient, root := pebble(t, ln.Addr().(*net.TCPAddr).Port)
	m := &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		HostPolicy: autocert.HostWhitelist("loom.test"),
		Client:     &acme.Client{DirectoryURL: directory, HTTPClient: acmeClient},
	}
	app, err := newApp(m, web.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	pool := x509.NewCertPool()
	pool.AddCert(root)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "loom.test"}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	resp, err := client.Get("https://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "Hello over HTTP/2.0 to loom.test\n" {
		t.Errorf("got %d %q; want 200 and a greeting over HTTP/2", resp.StatusCode, body)
	}
	if chains := resp.TLS.VerifiedChains; len(chains) == 0 || !chains[0][len(chains[0])-1].Equal(root) {
		t.Errorf("the certificate does not chain to Pebble's root")
	} else if leaf := chains[0][0]; !strings.Contains(strings.Join(leaf.DNSNames, ","), "loom.test") {
		t.Errorf("certificate for %v; want loom.test", leaf.DNSNames)
	}

	// A name the host policy does not allow gets no certificate.
	other := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "elsewhere.test"}}
	defer other.CloseIdleConnections()
	if _, err := (&http.Client{Transport: other}).Get("https://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) + "/"); err == nil {
		t.Error("a handshake for a name outside the host policy succeeded")
	}
}

func TestRun(t *testing.T) {
	cmdtest.StopsCleanly(t, run, "-addr", "127.0.0.1:0", "-domain", "localhost", "-cache", t.TempDir())
	cmdtest.RejectsStrayArgument(t, run, "-domain", "localhost")
	if err := run(t.Context(), []string{"-addr", "127.0.0.1:0"}); err == nil || !strings.Contains(err.Error(), "-domain") {
		t.Errorf("run without -domain: got %v; want an error naming -domain", err)
	}
}
