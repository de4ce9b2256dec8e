package nbio

import (
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/loomrt/loom/web"
)

// serveRaw serves handler on the engine until t ends, and returns the
// server and a connection to it.
func serveRaw(t *testing.T, handler http.HandlerFunc) (*server, net.Conn) {
	t.Helper()
	es, err := Engine().NewServer(&http.Server{Handler: handler}, web.EngineSettings{})
	if err != nil {
		t.Fatal(err)
	}
	sv := es.(*server)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- sv.Serve(ln) }()
	t.Cleanup(func() {
		_ = sv.Close()
		<-served
	})
	c := dialAndWait(t, ln.Addr().String(), sv, 1)
	t.Cleanup(func() { c.Close() })
	return sv, c
}

// TestRequestWithoutBodyHasNoBody: as on net/http, a request without a
// body has http.NoBody, which the App need not wrap; one with a body does
// not.
func TestRequestWithoutBodyHasNoBody(t *testing.T) {
	got := make(chan bool, 2)
	_, c := serveRaw(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Body == http.NoBody
	})
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\nPOST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"); err != nil {
		t.Fatal(err)
	}
	if get, post := <-got, <-got; !get || post {
		t.Errorf("NoBody: GET %v, POST with a body %v; want true, false", get, post)
	}
}
