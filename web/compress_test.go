package web_test

import (
	"compress/flate"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loomrt/loom/web"
)

func TestCompress(t *testing.T) {
	big := strings.Repeat("All work and no play makes Jack a dull boy. ", 100)
	app := newApp(t)
	app.Get("/big", text(big), web.WithDecorators(web.Compress))
	app.Get("/small", text("tiny"), web.WithDecorators(web.Compress))
	app.Get("/encoded", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Encoding", "br")
		_, err := io.WriteString(w, big)
		return err
	}, web.WithDecorators(web.Compress))
	app.Get("/plain", text(big))
	app.Get("/png", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "image/png")
		_, err := io.WriteString(w, big)
		return err
	}, web.WithDecorators(web.Compress))
	app.Group("/group", web.WithDecorators(web.Compress)).Get("/big", text(big))
	app.Get("/created", func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusCreated)
		return nil
	}, web.WithDecorators(web.Compress))

	tests := []struct {
		target, accept string
		encoding       string
		status         int
		body           string
	}{
		{"/big", "gzip, deflate, br", "gzip", 200, big},
		{"/big", "deflate", "deflate", 200, big},
		{"/big", "gzip;q=0.5, deflate;q=0.9", "deflate", 200, big},
		{"/big", "gzip;q=0, deflate;q=0", "", 200, big},
		// A q-value that is not a number from 0 to 1 refuses its encoding
		// and leaves the others' choice alone (NaN compared false with all).
		{"/big", "gzip;q=0.5, deflate;q=NaN", "gzip", 200, big},
		{"/big", "deflate;q=NaN, gzip;q=0.5", "gzip", 200, big},
		{"/big", "gzip;q=NaN", "", 200, big},
		{"/big", "gzip;q=Inf, deflate;q=0.1", "deflate", 200, big},
		{"/big", "gzip;q=-1, *;q=0.5", "deflate", 200, big},
		{"/big", "gzip;q=2, deflate", "deflate", 200, big},
		{"/big", "gzip;q=abc", "", 200, big},
		{"/big", "*", "gzip", 200, big},
		{"/big", "br", "", 200, big},
		{"/big", "", "", 200, big},
		{"/small", "gzip", "", 200, "tiny"},
		{"/encoded", "gzip", "br", 200, big},
		{"/plain", "gzip", "", 200, big},
		{"/png", "gzip", "", 200, big},
		{"/group/big", "gzip", "gzip", 200, big},
		{"/created", "gzip", "", 201, ""},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("GET", tt.target, nil)
		if tt.accept != "" {
			req.Header.Set("Accept-Encoding", tt.accept)
		}
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		got := rec.Header().Get("Content-Encoding")
		if rec.Code != tt.status || got != tt.encoding {
			t.Errorf("GET %s (Accept-Encoding %q): got %d encoding %q; want %d %q", tt.target, tt.accept, rec.Code, got, tt.status, tt.encoding)
			continue
		}
		var r io.Reader = rec.Body
		switch got {
		case "gzip":
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		case "deflate":
			r = flate.NewReader(rec.Body)
		}
		body, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("GET %s: decode %s: %v", tt.target, got, err)
		}
		if string(body) != tt.body {
			t.Errorf("GET %s (%s): body differs after decoding (%d bytes; want %d)", tt.target, got, len(body), len(tt.body))
		}
		if tt.target != "/plain" && !strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") {
			t.Errorf("GET %s: no Vary: Accept-Encoding", tt.target)
		}
		if got == "gzip" && rec.Body.Len() >= len(big) {
			t.Errorf("GET %s: gzip did not shrink the body", tt.target)
		}
	}
}

// Compression through a real server: the client's transparent gzip works,
// and pooled encoders are reused safely by concurrent requests.
func TestCompressConcurrent(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 512)
	app := newApp(t, web.WithDecorators(web.Compress))
	app.Get("/", text(big))
	srv := httptest.NewServer(app)
	defer srv.Close()
	errs := make(chan string, 16)
	for range 16 {
		go func() {
			resp, err := srv.Client().Get(srv.URL + "/")
			if err != nil {
				errs <- err.Error()
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if !resp.Uncompressed || string(body) != big {
				errs <- "bad body or not compressed"
				return
			}
			errs <- ""
		}()
	}
	for range 16 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}
