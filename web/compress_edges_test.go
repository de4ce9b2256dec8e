package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loomrt/loom/web"
)

// TestCompressEdges: Compress at its edges. A body of exactly
// MinCompressSize is compressed and one byte less is not; a weight of
// exactly 1 accepts an encoding and a refused one does not fall back to
// "*"; a handler that sends its 200 before the body still gets it
// compressed; a 206 (a range of a file) never is.
func TestCompressEdges(t *testing.T) {
	app := newApp(t)
	body := func(n int) string { return strings.Repeat("a", n) }
	app.Get("/min", text(body(web.MinCompressSize)), web.Use(web.Compress))
	app.Get("/below", text(body(web.MinCompressSize-1)), web.Use(web.Compress))
	app.Get("/in-pieces", func(w http.ResponseWriter, r *http.Request) error {
		_, _ = io.WriteString(w, body(web.MinCompressSize-1))
		_, err := io.WriteString(w, "a") // the byte that reaches the size
		return err
	}, web.Use(web.Compress))
	app.Get("/status-first", func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusOK)
		_, err := io.WriteString(w, body(4*web.MinCompressSize))
		return err
	}, web.Use(web.Compress))
	app.Get("/partial", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Range", "bytes 0-4095/10000")
		w.WriteHeader(http.StatusPartialContent)
		_, err := io.WriteString(w, body(4*web.MinCompressSize))
		return err
	}, web.Use(web.Compress))

	tests := []struct {
		target, accept string
		status         int
		encoding       string
	}{
		{"/min", "gzip", 200, "gzip"},
		{"/below", "gzip", 200, ""},
		{"/in-pieces", "gzip", 200, "gzip"},
		{"/min", "gzip;q=1", 200, "gzip"},
		{"/min", "deflate;q=1", 200, "deflate"},
		{"/min", "gzip;q=0, deflate;q=0, *", 200, ""},
		{"/min", "deflate;q=0, gzip;q=0, *;q=0.5", 200, ""},
		{"/status-first", "gzip", 200, "gzip"},
		{"/partial", "gzip", 206, ""},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, tt.target, nil)
		req.Header.Set("Accept-Encoding", tt.accept)
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		// The header as sent: a recorder's Header() would show later changes too.
		if got := rec.Result().Header.Get("Content-Encoding"); rec.Code != tt.status || got != tt.encoding {
			t.Errorf("GET %s (Accept-Encoding %q): got %d, encoding %q; want %d, %q", tt.target, tt.accept, rec.Code, got, tt.status, tt.encoding)
		}
		if tt.encoding == "" && rec.Body.Len() < web.MinCompressSize-1 {
			t.Errorf("GET %s (Accept-Encoding %q): %d bytes sent as is; want the whole body", tt.target, tt.accept, rec.Body.Len())
		}
	}
}
