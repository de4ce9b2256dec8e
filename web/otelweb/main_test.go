package otelweb_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests, or, with LOOM_OTELWEB_HELLO set to a variant of
// BenchmarkHelloOtel, serves that hello App on LOOM_OTELWEB_ADDR until a
// request to /quit: the server the cost figures of docs/web.md count under
// callgrind (which aborts on SIGTERM, hence /quit).
func TestMain(m *testing.M) {
	if v := os.Getenv("LOOM_OTELWEB_HELLO"); v != "" {
		if err := serveHello(v, os.Getenv("LOOM_OTELWEB_ADDR")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func serveHello(variant, addr string) error {
	app, shutdown, err := newHelloApp(variant)
	defer shutdown()
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	app.Get("/quit", func(w http.ResponseWriter, r *http.Request) error {
		stop()
		return nil
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println("listening", ln.Addr())
	return app.Serve(ctx, ln)
}
