package web_test

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// discard is a ResponseWriter reused across iterations, so that benchmarks
// measure the framework, not the recorder. It keeps the status and the
// body's length of the last response, so that a benchmark can check what it
// served: a handler that fails fast must not look like a fast handler.
type discard struct {
	header http.Header
	status int // 0 until a header or body was written
	n      int // body bytes written
}

func (d *discard) Header() http.Header { return d.header }

func (d *discard) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	d.n += len(p)
	return len(p), nil
}

func (d *discard) WriteHeader(status int) {
	if d.status == 0 {
		d.status = status
	}
}

// WriteString takes a string as *http.response does, without a copy.
func (d *discard) WriteString(s string) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	d.n += len(s)
	return len(s), nil
}

// reset readies d for the next response.
func (d *discard) reset() { d.status, d.n = 0, 0 }

// served returns the status of the last response: 200 for one that wrote
// nothing, as net/http sends.
func (d *discard) served() int { return cmp.Or(d.status, http.StatusOK) }

func newDiscard() *discard { return &discard{header: make(http.Header)} }

// benchServe serves target on h in a loop. It first serves it once to a
// recorder and wants a 200 with wantBody, then wants every response of the
// loop to be a 200 of len(wantBody) bytes.
func benchServe(b *testing.B, h http.Handler, target, wantBody string) {
	b.Helper()
	checkServes(b, h, target, wantBody)
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := newDiscard()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, req)
		if w.served() != http.StatusOK || w.n != len(wantBody) {
			b.Fatalf("GET %s: got %d with %d bytes; want 200 with %d", target, w.served(), w.n, len(wantBody))
		}
	}
}

// checkServes serves target on h once and wants a 200 with wantBody.
func checkServes(b *testing.B, h http.Handler, target, wantBody string) {
	b.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	if rec.Code != http.StatusOK || rec.Body.String() != wantBody {
		b.Fatalf("GET %s: got %d %q; want 200 %q", target, rec.Code, rec.Body, wantBody)
	}
}

func benchApp(b *testing.B) *web.App {
	b.Helper()
	e := loom.Virtual()
	b.Cleanup(func() { _ = e.Shutdown(b.Context()) })
	app, err := web.New(web.WithExecutor(e))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = app.Shutdown(b.Context()) })
	return app
}

var helloBytes = []byte("Hello World!")

// BenchmarkRouteStatic routes to a static route among parameterised ones;
// it must not allocate.
func BenchmarkRouteStatic(b *testing.B) {
	app := benchApp(b)
	app.Get("/users/{id}", text("user"))
	app.Get("/users/{id}/posts/{post}", text("post"))
	app.Get("/users/me/settings", text("settings"))
	app.Post("/users", text("new user"))
	app.Get("/static/{path...}", text("static"))
	benchServe(b, app, "/users/me/settings", "settings")
}

// BenchmarkRouteParam routes to a route with two parameters.
func BenchmarkRouteParam(b *testing.B) {
	app := benchApp(b)
	app.Get("/users/{id}", text("user"))
	app.Get("/users/{id}/posts/{post}", text("post"))
	benchServe(b, app, "/users/42/posts/7", "post")
}

// BenchmarkHello compares the hello handler on an App with the virtual
// executor against the same handler on a bare http.ServeMux, writing with
// w.Write and, as examples/hello does, with io.WriteString.
func BenchmarkHello(b *testing.B) {
	b.Run("mux", func(b *testing.B) {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(helloBytes)
		})
		benchServe(b, mux, "/", "Hello World!")
	})
	b.Run("app-virtual", func(b *testing.B) {
		app := benchApp(b)
		app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
			_, err := w.Write(helloBytes)
			return err
		})
		benchServe(b, app, "/", "Hello World!")
	})
	b.Run("mux-writestring", func(b *testing.B) {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "Hello World!")
		})
		benchServe(b, mux, "/", "Hello World!")
	})
	b.Run("app-virtual-writestring", func(b *testing.B) {
		app := benchApp(b)
		app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
			_, err := io.WriteString(w, "Hello World!")
			return err
		})
		benchServe(b, app, "/", "Hello World!")
	})
}

// BenchmarkHelloPool is the hello handler on a pool of 4 workers: the cost
// of a hand-off.
func BenchmarkHelloPool(b *testing.B) {
	e := loom.Pool(4)
	b.Cleanup(func() { _ = e.Shutdown(b.Context()) })
	app, err := web.New(web.WithExecutor(e))
	if err != nil {
		b.Fatal(err)
	}
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "Hello World!")
		return err
	})
	benchServe(b, app, "/", "Hello World!")
}

// BenchmarkVirtualRun is the executor's share of BenchmarkHello/app-virtual:
// loom.Virtual().Run with a task that does nothing.
func BenchmarkVirtualRun(b *testing.B) {
	e := loom.Virtual()
	b.Cleanup(func() { _ = e.Shutdown(b.Context()) })
	task := func(context.Context) {}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = e.Run(ctx, task)
	}
}

// BenchmarkHelloSocket is BenchmarkHello over loopback TCP with keep-alive
// clients, where the framework's share of a request is what users see.
func BenchmarkHelloSocket(b *testing.B) {
	serve := func(b *testing.B, h http.Handler) {
		srv := httptest.NewServer(h)
		defer srv.Close()
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		defer client.CloseIdleConnections()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				resp, err := client.Get(srv.URL + "/")
				if err != nil {
					b.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || len(body) != len(helloBytes) {
					b.Errorf("got %d %q", resp.StatusCode, body)
					return
				}
			}
		})
	}
	b.Run("mux", func(b *testing.B) {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(helloBytes)
		})
		serve(b, mux)
	})
	b.Run("app-virtual", func(b *testing.B) {
		app := benchApp(b)
		app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
			_, err := w.Write(helloBytes)
			return err
		})
		serve(b, app)
	})
}

// BenchmarkCompress is a 16 KiB response through web.Compress with gzip:
// encoders come from a pool, so the steady state allocates little.
func BenchmarkCompress(b *testing.B) {
	app := benchApp(b)
	body := []byte(strings.Repeat("All work and no play makes Jack a dull boy. ", 372))
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		_, err := w.Write(body)
		return err
	}, web.WithDecorators(web.Compress))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")

	// What it serves: the body, gzipped.
	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, req)
	zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		b.Fatalf("got %d, Content-Encoding %q, a body gzip cannot read: %v", rec.Code, rec.Header().Get("Content-Encoding"), err)
	}
	plain, err := io.ReadAll(zr)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "gzip" || err != nil || !bytes.Equal(plain, body) {
		b.Fatalf("got %d, Content-Encoding %q, %d bytes unzipped (%v); want 200, gzip, the %d bytes written",
			rec.Code, rec.Header().Get("Content-Encoding"), len(plain), err, len(body))
	}
	zipped := rec.Body.Len()

	w := newDiscard()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		clear(w.header)
		w.reset()
		app.ServeHTTP(w, req)
		if w.served() != http.StatusOK || w.n != zipped || w.header.Get("Content-Encoding") != "gzip" {
			b.Fatalf("got %d, %d bytes, Content-Encoding %q; want 200, %d bytes, gzip", w.served(), w.n, w.header.Get("Content-Encoding"), zipped)
		}
	}
}

// BenchmarkHelloServe is the hello handler served by App.Serve over
// loopback TCP with keep-alive clients, with and without the write timeout:
// what the per-connection deadline costs.
func BenchmarkHelloServe(b *testing.B) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
	}{{"write-timeout", web.DefaultWriteTimeout}, {"no-write-timeout", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			e := loom.Virtual()
			defer e.Shutdown(context.Background())
			app, err := web.New(web.WithExecutor(e), web.WithWriteTimeout(tc.timeout), web.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				b.Fatal(err)
			}
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
				_, err := w.Write(helloBytes)
				return err
			})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			ctx, stop := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- app.Serve(ctx, ln) }()
			defer func() {
				stop()
				if err := <-served; err != nil {
					b.Error(err)
				}
			}()
			url := "http://" + ln.Addr().String() + "/"
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer client.CloseIdleConnections()
			if got := <-webtest.GetAsync(client, url); got.Err != nil || got.Status != http.StatusOK || got.Body != string(helloBytes) {
				b.Fatalf("GET /: got %d %q (%v); want 200 %q", got.Status, got.Body, got.Err, helloBytes)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := client.Get(url)
					if err != nil {
						b.Error(err)
						return
					}
					n, err := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != http.StatusOK || n != int64(len(helloBytes)) {
						b.Errorf("got %d with %d bytes (%v); want 200 with %d", resp.StatusCode, n, err, len(helloBytes))
						return
					}
				}
			})
		})
	}
}
