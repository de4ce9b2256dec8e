package nbio_test

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/loomrt/loom/web/internal/webtest"
)

// TestHijackedReadEndsAtTheClientsClose: a client that closes a hijacked
// connection ends the hijacker's read with io.EOF, as on net/http, and not
// only once something else closes the connection (conn.go, onRead's
// n == 0: a read of nothing is the client's close).
func TestHijackedReadEndsAtTheClientsClose(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			ended := make(chan error, 1)
			app.Get("/raw", func(w http.ResponseWriter, r *http.Request) error {
				conn, rw, err := http.NewResponseController(w).Hijack()
				if err != nil {
					ended <- err
					return err
				}
				defer conn.Close()
				if _, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"); err != nil {
					ended <- err
					return nil
				}
				_, err = rw.ReadString('\n')
				ended <- err
				return nil
			})
			base, _ := webtest.Serve(t, app)
			c := webtest.Dial(t, base)
			if _, err := io.WriteString(c, "GET /raw HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-ended:
				if !errors.Is(err, io.EOF) {
					t.Errorf("the hijacker's read: %v; want io.EOF", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the hijacker's read had not ended 10 s after the client closed")
			}
		})
	}
}
