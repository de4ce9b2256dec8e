// Command autotls serves HTTPS with certificates it obtains and renews by
// itself from an ACME certificate authority (Let's Encrypt by default),
// through golang.org/x/crypto/acme/autocert and web.WithTLSConfig: the
// TLS-ALPN-01 challenge is answered on the same port, so only :443 needs
// to be reachable from the internet.
//
//	go run ./examples/autotls -domain example.com -email ops@example.com -cache /var/lib/autotls
//
// Certificates and the account key are kept in the -cache directory, so a
// restart does not ask the CA again.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"github.com/loomrt/loom/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "autotls:", err)
		os.Exit(1)
	}
}

// run serves the app until ctx ends.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("autotls", flag.ContinueOnError)
	addr := flags.String("addr", ":443", "listen address")
	domains := flags.String("domain", "", "comma-separated host names to obtain certificates for (required)")
	email := flags.String("email", "", "contact address for the CA's notices")
	cache := flags.String("cache", "autotls-cache", "directory for certificates and the account key")
	directory := flags.String("directory", acme.LetsEncryptURL, "the ACME CA's directory URL")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	if *domains == "" {
		return errors.New("-domain is required")
	}
	m := &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		HostPolicy: autocert.HostWhitelist(strings.Split(*domains, ",")...),
		Cache:      autocert.DirCache(*cache),
		Email:      *email,
		Client:     &acme.Client{DirectoryURL: *directory},
	}
	app, err := newApp(m)
	if err != nil {
		return err
	}
	return app.ListenAndServe(ctx, *addr)
}

// newApp serves a greeting over TLS with the certificates m obtains.
func newApp(m *autocert.Manager, opts ...web.AppOption) (*web.App, error) {
	app, err := web.New(append([]web.AppOption{web.WithTLSConfig(m.TLSConfig())}, opts...)...)
	if err != nil {
		return nil, err
	}
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "Hello over "+r.Proto+" to "+r.TLS.ServerName+"\n")
		return err
	})
	return app, nil
}
