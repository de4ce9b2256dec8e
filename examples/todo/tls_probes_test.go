package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 that signs itself, and
// its key, to dir, and returns their paths and a pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "todo test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for name, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(name, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestRunTLSAndProbes runs the command with -tls-cert, -tls-key, -probes
// and -shutdown-delay: the API answers over HTTPS and HTTP/2 to a client
// that checks the certificate, /readyz includes the database, and once
// the command is told to stop a probe loop sees /readyz fail while
// connections are still accepted, then refused, and run returns nil.
func TestRunTLSAndProbes(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	args := []string{"-addr", addr, "-db", filepath.Join(dir, "todo.db"),
		"-tls-cert", certFile, "-tls-key", keyFile, "-probes", "-shutdown-delay", "1s"}
	go func() { done <- run(ctx, args, func(string) string { return "" }) }()

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	url := "https://" + addr
	var resp *http.Response
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err = client.Post(url+"/api/todos", "application/json", strings.NewReader(`{"text":"over TLS"}`)); err == nil {
			break
		}
	}
	if err != nil {
		cancel()
		t.Fatalf("server did not come up: %v (run: %v)", err, <-done)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || resp.ProtoMajor != 2 || resp.TLS == nil {
		t.Errorf("POST /api/todos: got %d over %s (TLS %v); want 201 over HTTP/2 and TLS", resp.StatusCode, resp.Proto, resp.TLS != nil)
	}

	probe := func(path string) (int, string, error) {
		fresh := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}
		defer fresh.CloseIdleConnections()
		resp, err := (&http.Client{Transport: fresh, Timeout: 10 * time.Second}).Get(url + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	if status, body, err := probe("/livez"); status != 200 {
		t.Errorf("GET /livez: got %d %q %v; want 200", status, body, err)
	}
	if status, body, err := probe("/readyz?verbose"); status != 200 || !strings.Contains(body, "[+]database ok") {
		t.Errorf("GET /readyz?verbose: got %d %q %v; want 200 with the database check", status, body, err)
	}

	cancel()
	var states []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		status, _, err := probe("/readyz")
		state := "refused"
		if err == nil {
			state = strconv.Itoa(status)
		}
		if len(states) == 0 || states[len(states)-1] != state {
			states = append(states, state)
		}
		if state == "refused" {
			break
		}
	}
	// The first probe may come before the context's end reaches Serve.
	if len(states) > 0 && states[0] == "200" {
		states = states[1:]
	}
	if want := []string{"503", "refused"}; !slices.Equal(states, want) {
		t.Errorf("/readyz after the stop went through %v; want %v (after any 200s)", states, want)
	}
	if err := <-done; err != nil {
		t.Errorf("run after cancel: got %v; want nil", err)
	}
}
