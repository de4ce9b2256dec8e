package web_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// headerSlack is what net/http reads beyond MaxHeaderBytes before it gives
// up on a request's head (request line and headers): a request whose head
// is MaxHeaderBytes + headerSlack bytes is read whole, one byte more is
// refused with 431. web/nbio keeps the same edge.
const headerSlack = 4096

// TestHeaderSizeEdge sends request heads of exactly the header limit and
// one byte over it, on the std engine, with the App's default limit
// (DefaultMaxHeaderBytes) and with one set by WithServerConfig: at the limit
// the handler answers, one byte over net/http answers 431 and the handler
// never runs.
func TestHeaderSizeEdge(t *testing.T) {
	tests := []struct {
		name  string
		limit int
		opts  []web.AppOption
	}{
		{"default", web.DefaultMaxHeaderBytes, nil},
		{"configured", 2000, []web.AppOption{web.WithServerConfig(func(s *http.Server) { s.MaxHeaderBytes = 2000 })}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := webtest.NewApp(t, tt.opts...)
			var served atomic.Int32
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
				served.Add(1)
				_, err := io.WriteString(w, "ok")
				return err
			})
			base, _ := webtest.Serve(t, app)
			addr := strings.TrimPrefix(base, "http://")
			edge := tt.limit + headerSlack
			if got := rawStatus(t, addr, head(edge)); got != "HTTP/1.1 200 OK" {
				t.Errorf("head of %d bytes (the limit): got %q; want 200", edge, got)
			}
			if got := rawStatus(t, addr, head(edge+1)); !strings.HasPrefix(got, "HTTP/1.1 431 ") {
				t.Errorf("head of %d bytes (one over): got %q; want 431", edge+1, got)
			}
			if n := served.Load(); n != 1 {
				t.Errorf("handler ran %d times; want once (at the limit only)", n)
			}
		})
	}
}

// head returns a GET request whose request line and headers, final blank
// line included, are exactly n bytes.
func head(n int) string {
	const start, end = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: ", "\r\n\r\n"
	return start + strings.Repeat("a", n-len(start)-len(end)) + end
}

// rawStatus sends raw on a new connection to addr and returns the status
// line of the answer, or "closed" when the connection closed without one.
func rawStatus(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The server may stop reading a head it refuses: write aside.
	go func() { _, _ = io.WriteString(c, raw) }()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("no answer and no close in 20s")
		}
		return "closed"
	}
	return strings.TrimSpace(line)
}
