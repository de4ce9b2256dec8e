package web_test

import (
	"bytes"
	"cmp"
	"compress/flate"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"strings"
	"testing"
	"time"

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

// TestCompressEdges: Compress at its edges. A body of exactly
// MinCompressSize is compressed and one byte less is not; a weight of
// exactly 1 accepts an encoding and a refused one does not fall back to
// "*"; a handler that sends its 200 before the body still gets it
// compressed; a 206 (a range of a file) never is.
func TestCompressEdges(t *testing.T) {
	app := newApp(t)
	body := func(n int) string { return strings.Repeat("a", n) }
	app.Get("/min", text(body(web.MinCompressSize)), web.WithDecorators(web.Compress))
	app.Get("/below", text(body(web.MinCompressSize-1)), web.WithDecorators(web.Compress))
	app.Get("/in-pieces", func(w http.ResponseWriter, r *http.Request) error {
		_, _ = io.WriteString(w, body(web.MinCompressSize-1))
		_, err := io.WriteString(w, "a") // the byte that reaches the size
		return err
	}, web.WithDecorators(web.Compress))
	app.Get("/status-first", func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusOK)
		_, err := io.WriteString(w, body(4*web.MinCompressSize))
		return err
	}, web.WithDecorators(web.Compress))
	app.Get("/partial", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Range", "bytes 0-4095/10000")
		w.WriteHeader(http.StatusPartialContent)
		_, err := io.WriteString(w, body(4*web.MinCompressSize))
		return err
	}, web.WithDecorators(web.Compress))

	tests := []struct {
		method         string
		target, accept string
		rangeHeader    string
		status         int
		encoding       string
	}{
		// A HEAD response's headers must be those of the GET's, uncompressed
		// as Compress cannot know the GET's size; a range is of the
		// resource's bytes, not of a compressed stream.
		{method: http.MethodHead, target: "/min", accept: "gzip", status: 200},
		{target: "/min", accept: "gzip", rangeHeader: "bytes=0-9", status: 200},

		{target: "/min", accept: "gzip", status: 200, encoding: "gzip"},
		{target: "/below", accept: "gzip", status: 200},
		{target: "/in-pieces", accept: "gzip", status: 200, encoding: "gzip"},
		{target: "/min", accept: "gzip;q=1", status: 200, encoding: "gzip"},
		{target: "/min", accept: "deflate;q=1", status: 200, encoding: "deflate"},
		{target: "/min", accept: "gzip;q=0, deflate;q=0, *", status: 200},
		{target: "/min", accept: "deflate;q=0, gzip;q=0, *;q=0.5", status: 200},
		{target: "/status-first", accept: "gzip", status: 200, encoding: "gzip"},
		{target: "/partial", accept: "gzip", status: 206},
	}
	for _, tt := range tests {
		method := cmp.Or(tt.method, http.MethodGet)
		req := httptest.NewRequest(method, tt.target, nil)
		req.Header.Set("Accept-Encoding", tt.accept)
		if tt.rangeHeader != "" {
			req.Header.Set("Range", tt.rangeHeader)
		}
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		// The header as sent: a recorder's Header() would show later changes too.
		if got := rec.Result().Header.Get("Content-Encoding"); rec.Code != tt.status || got != tt.encoding {
			t.Errorf("%s %s (Accept-Encoding %q, Range %q): got %d, encoding %q; want %d, %q", method, tt.target, tt.accept, tt.rangeHeader, rec.Code, got, tt.status, tt.encoding)
		}
		if method == http.MethodHead {
			continue
		}
		if got := decoded(t, rec); len(got) < web.MinCompressSize-1 || strings.Trim(got, "a") != "" {
			t.Errorf("GET %s (Accept-Encoding %q): %d bytes after decoding, not all the handler's; want the whole body", tt.target, tt.accept, len(got))
		}
	}
}

// decoded returns the body of rec decoded as its Content-Encoding says.
func decoded(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var r io.Reader = bytes.NewReader(rec.Body.Bytes())
	switch enc := rec.Result().Header.Get("Content-Encoding"); enc {
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		r = zr
	case "deflate":
		r = flate.NewReader(r)
	case "":
	default:
		t.Fatalf("unexpected Content-Encoding %q", enc)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding the body: %v", err)
	}
	return string(b)
}

// TestCompressETagAndSilence: a compressed response's strong ETag becomes
// weak (the bytes differ from the resource's) and a weak one or none is left
// as it is; a handler that writes nothing leaves the response to whatever
// wraps Compress, which may still set its status.
func TestCompressETagAndSilence(t *testing.T) {
	app := newApp(t)
	big := strings.Repeat("b", 2*web.MinCompressSize)
	withETag := func(etag string) web.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) error {
			if etag != "" {
				w.Header().Set("ETag", etag)
			}
			_, err := io.WriteString(w, big)
			return err
		}
	}
	app.Get("/strong", withETag(`"v1"`), web.WithDecorators(web.Compress))
	app.Get("/weak", withETag(`W/"v1"`), web.WithDecorators(web.Compress))
	app.Get("/none", withETag(""), web.WithDecorators(web.Compress))
	// fallback answers 404 for a handler that sent nothing.
	fallback := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tw := &sentTracker{ResponseWriter: w}
			next.ServeHTTP(tw, r)
			if !tw.sent {
				http.Error(w, "nothing here", http.StatusNotFound)
			}
		})
	}
	app.Get("/silent", func(w http.ResponseWriter, r *http.Request) error { return nil }, web.WithDecorators(fallback, web.Compress))

	for _, tt := range []struct{ target, etag string }{{"/strong", `W/"v1"`}, {"/weak", `W/"v1"`}, {"/none", ""}} {
		req := httptest.NewRequest(http.MethodGet, tt.target, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		h := rec.Result().Header
		if h.Get("Content-Encoding") != "gzip" || h.Get("ETag") != tt.etag || len(h.Values("ETag")) > 1 {
			t.Errorf("GET %s: Content-Encoding %q, ETag %q; want gzip, %q", tt.target, h.Get("Content-Encoding"), h.Values("ETag"), tt.etag)
		}
		if got := decoded(t, rec); got != big {
			t.Errorf("GET %s: %d bytes after decoding; want the %d written", tt.target, len(got), len(big))
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/silent", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET /silent under Compress, inside a decorator that answers 404 when nothing was sent: got %d; want 404", rec.Code)
	}
}

// sentTracker notes whether anything was sent through it.
type sentTracker struct {
	http.ResponseWriter
	sent bool
}

func (w *sentTracker) WriteHeader(status int) {
	w.sent = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *sentTracker) Write(p []byte) (int, error) {
	w.sent = true
	return w.ResponseWriter.Write(p)
}

func (w *sentTracker) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestCompressFlush: a response flushed before Compress decided (less than
// MinCompressSize written) is sent as is, one that reached MinCompressSize
// before the flush is compressed; either way the client gets the whole
// body.
func TestCompressFlush(t *testing.T) {
	app := newApp(t)
	flushAfter := func(n int) web.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) error {
			if n > 0 {
				_, _ = io.WriteString(w, strings.Repeat("a", n))
			}
			if err := http.NewResponseController(w).Flush(); err != nil {
				return err
			}
			_, err := io.WriteString(w, strings.Repeat("a", 2*web.MinCompressSize))
			return err
		}
	}
	app.Get("/small", flushAfter(10), web.WithDecorators(web.Compress))
	app.Get("/min", flushAfter(web.MinCompressSize), web.WithDecorators(web.Compress))
	app.Get("/first", flushAfter(0), web.WithDecorators(web.Compress)) // a flush before any byte sends the 200
	for _, tt := range []struct {
		target, encoding string
		size             int
	}{{"/small", "", 10 + 2*web.MinCompressSize}, {"/min", "gzip", 3 * web.MinCompressSize}, {"/first", "", 2 * web.MinCompressSize}} {
		req := httptest.NewRequest(http.MethodGet, tt.target, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		if got := rec.Result().Header.Get("Content-Encoding"); rec.Code != http.StatusOK || got != tt.encoding {
			t.Errorf("GET %s: %d, Content-Encoding %q; want 200, %q", tt.target, rec.Code, got, tt.encoding)
		}
		if got := decoded(t, rec); len(got) != tt.size {
			t.Errorf("GET %s: %d bytes after decoding; want %d", tt.target, len(got), tt.size)
		}
	}
}

// TestCompressPassesEarlyHints: an informational status (103 Early Hints)
// goes out at once, ahead of a compressed body that is still to be
// written; the handler waits until the client has seen it. (compress.go,
// WriteHeader's status < 200.)
func TestCompressPassesEarlyHints(t *testing.T) {
	seen := make(chan struct{})
	app := newApp(t)
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		select {
		case <-seen:
		case <-time.After(20 * time.Second):
			return web.Errorf(http.StatusGatewayTimeout, "the client saw no 103 in 20s")
		}
		_, err := io.WriteString(w, strings.Repeat("a", 2*web.MinCompressSize))
		return err
	}, web.WithDecorators(web.Compress))
	url, _ := serveApp(t, app)
	req, err := http.NewRequest(http.MethodGet, url+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	var hints []int
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
			if hints = append(hints, code); len(hints) == 1 {
				close(seen)
			}
			return nil
		},
	}))
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if enc := resp.Header.Get("Content-Encoding"); resp.StatusCode != http.StatusOK || enc != "gzip" || !slices.Equal(hints, []int{103}) {
		t.Errorf("got 1xx %v, then %d with Content-Encoding %q; want [103], then 200 gzip", hints, resp.StatusCode, enc)
	}
}
