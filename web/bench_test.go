package web_test

import (
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
)

// discard is a ResponseWriter reused across iterations, so that benchmarks
// measure the framework, not the recorder.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// WriteString takes a string as *http.response does, without a copy.
func (d *discard) WriteString(s string) (int, error) { return len(s), nil }

func newDiscard() *discard { return &discard{header: make(http.Header)} }

func benchServe(b *testing.B, h http.Handler, target string) {
	b.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := newDiscard()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h.ServeHTTP(w, req)
	}
}

func benchApp(b *testing.B) *web.App {
	b.Helper()
	e := loom.Virtual()
	b.Cleanup(func() { _ = e.Shutdown(b.Context()) })
	app, err := web.New(web.Executor(e))
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
	noop := func(w http.ResponseWriter, r *http.Request) error { return nil }
	app.Get("/users/{id}", noop)
	app.Get("/users/{id}/posts/{post}", noop)
	app.Get("/users/me/settings", noop)
	app.Post("/users", noop)
	app.Get("/static/{path...}", noop)
	benchServe(b, app, "/users/me/settings")
}

// BenchmarkRouteParam routes to a route with two parameters.
func BenchmarkRouteParam(b *testing.B) {
	app := benchApp(b)
	noop := func(w http.ResponseWriter, r *http.Request) error { return nil }
	app.Get("/users/{id}", noop)
	app.Get("/users/{id}/posts/{post}", noop)
	benchServe(b, app, "/users/42/posts/7")
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
		benchServe(b, mux, "/")
	})
	b.Run("app-virtual", func(b *testing.B) {
		app := benchApp(b)
		app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
			_, err := w.Write(helloBytes)
			return err
		})
		benchServe(b, app, "/")
	})
	b.Run("mux-writestring", func(b *testing.B) {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "Hello World!")
		})
		benchServe(b, mux, "/")
	})
	b.Run("app-virtual-writestring", func(b *testing.B) {
		app := benchApp(b)
		app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
			_, err := io.WriteString(w, "Hello World!")
			return err
		})
		benchServe(b, app, "/")
	})
}

// BenchmarkHelloPool is the hello handler on a pool of 4 workers: the cost
// of a hand-off.
func BenchmarkHelloPool(b *testing.B) {
	e := loom.Pool(4)
	b.Cleanup(func() { _ = e.Shutdown(b.Context()) })
	app, err := web.New(web.Executor(e))
	if err != nil {
		b.Fatal(err)
	}
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "Hello World!")
		return err
	})
	benchServe(b, app, "/")
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
	}, web.Use(web.Compress))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	w := newDiscard()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		clear(w.header)
		app.ServeHTTP(w, req)
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
			app, err := web.New(web.Executor(e), web.WriteTimeout(tc.timeout), web.Logger(slog.New(slog.DiscardHandler)))
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
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := client.Get(url)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		})
	}
}
