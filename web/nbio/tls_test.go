package nbio_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
	"github.com/loomrt/loom/web/nbio"
)

// TestTLSIsRefusedAtStart: the nbio engine does not serve TLS, and an App
// asking for both does not start, with an error naming the engine and the
// way out.
func TestTLSIsRefusedAtStart(t *testing.T) {
	certs := webtest.NewCerts(t)
	app := webtest.NewApp(t, web.WithEngine(nbio.Engine()), web.WithTLS(certs.CertFile, certs.KeyFile))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = app.Serve(context.Background(), ln)
	if err == nil || !strings.Contains(err.Error(), "engine nbio") || !strings.Contains(err.Error(), "TLS is not supported") {
		t.Errorf("Serve with TLS on nbio: got %v; want an error saying the nbio engine does not serve TLS", err)
	}
}

// TestH2CIsRefusedAtStart: the nbio engine does not serve HTTP/2 in
// cleartext, and an App asking for it (WithH2C) does not start, instead of
// answering HTTP/2's preface as a bad HTTP/1.1 request.
func TestH2CIsRefusedAtStart(t *testing.T) {
	app := webtest.NewApp(t, web.WithEngine(nbio.Engine()), web.WithH2C())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // an App that starts anyway stops at once, and the test fails instead of hanging
	err = app.Serve(ctx, ln)
	if err == nil || !strings.Contains(err.Error(), "engine nbio") || !strings.Contains(err.Error(), "h2c") {
		t.Errorf("Serve with WithH2C on nbio: got %v; want an error saying the nbio engine does not serve h2c", err)
	}
}
