package web_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

func Example() {
	app, err := web.New() // the executor comes from LOOM_EXECUTOR_HTTP, LOOM_EXECUTOR, else virtual
	if err != nil {
		fmt.Println(err)
		return
	}
	defer app.Shutdown(context.Background())
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "Hello World!")
		return err
	})

	srv := httptest.NewServer(app) // app.Run(addr) in a real program
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 Hello World!
}

func ExampleJSON() {
	type greeting struct {
		Name string `json:"name"`
	}
	app := web.MustNew(web.WithExecutor(loom.Virtual()))
	app.Post("/greet/{lang}", web.JSON(func(r *http.Request, in greeting) (map[string]string, error) {
		if in.Name == "" {
			return nil, web.Errorf(http.StatusBadRequest, "name is empty")
		}
		return map[string]string{"greeting": "Hello, " + in.Name, "lang": web.Param(r, "lang").String()}, nil
	}))

	for _, body := range []string{`{"name":"Ann"}`, `{"name":""}`, `{"name":`} {
		req := httptest.NewRequest("POST", "/greet/en", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// 200 {"greeting":"Hello, Ann","lang":"en"}
	// 400 {"error":"name is empty"}
	// 400 {"error":"malformed JSON: unexpected end of body"}
}

func ExampleWithDisallowUnknownFields() {
	type transfer struct {
		To     string `json:"to"`
		Cents  int    `json:"cents"`
		DryRun bool   `json:"dry_run"`
	}
	app := web.MustNew(web.WithExecutor(loom.Virtual()))
	app.Post("/transfers", web.JSON(func(r *http.Request, in transfer) (transfer, error) {
		return in, nil // a real handler would move the money unless in.DryRun
	}, web.WithDisallowUnknownFields()))

	for _, body := range []string{`{"to":"ann","cents":500,"dry_run":true}`, `{"to":"ann","cents":500,"dryrun":true}`} {
		req := httptest.NewRequest("POST", "/transfers", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// 200 {"to":"ann","cents":500,"dry_run":true}
	// 400 {"error":"unknown JSON field \"dryrun\""}
}

func ExampleValue() {
	app := web.MustNew(web.WithExecutor(loom.Virtual()))
	app.Get("/items/{id}", func(w http.ResponseWriter, r *http.Request) error {
		id, err := web.Param(r, "id").Int()
		if err != nil {
			return err // a 400 naming the parameter
		}
		limit, err := web.Query(r, "limit").IntOr(10)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "item %d, limit %d\n", id, limit)
		return err
	})
	for _, path := range []string{"/items/42", "/items/42?limit=5", "/items/forty-two", "/items/42?limit=all"} {
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// 200 item 42, limit 10
	// 200 item 42, limit 5
	// 400 path parameter "id": "forty-two" is not an integer
	// 400 query parameter "limit": "all" is not an integer
}

func ExampleWithExecutorFromEnv() {
	app := web.MustNew(web.WithExecutor(loom.Virtual(loom.WithName("http"))))
	defer app.Shutdown(context.Background())
	// The slow routes get their own bounded executor, "reports", which the
	// App builds and shuts down (LOOM_EXECUTOR_REPORTS overrides the spec):
	// when it is full, only they get 503s.
	reports := app.Group("/reports", web.WithExecutorFromEnv("reports", "limit:8"))
	reports.Get("/daily", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "daily report\n")
		return err
	})
	if err := app.Err(); err != nil { // a bad LOOM_EXECUTOR_REPORTS
		fmt.Println(err)
		return
	}

	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, httptest.NewRequest("GET", "/reports/daily", nil))
	fmt.Print(rec.Body.String())
	for _, e := range app.Executors() {
		s := e.Stats()
		fmt.Println(s.Name, s.Kind, s.Completed)
	}
	// Output:
	// daily report
	// http virtual 0
	// reports limit 1
}

func ExampleGroup() {
	app := web.MustNew(web.WithExecutor(loom.Virtual()))
	// Every route of /api needs a token; /api/upload takes larger bodies.
	api := app.Group("/api", web.WithDecorators(requireToken))
	api.Get("/ping", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "pong\n")
		return err
	})
	api.Post("/upload", func(w http.ResponseWriter, r *http.Request) error {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			return err // a 413 past the limit
		}
		_, err = fmt.Fprintf(w, "%d bytes\n", n)
		return err
	}, web.WithBodyLimit(64<<20))

	for _, req := range []*http.Request{
		httptest.NewRequest("GET", "/api/ping", nil),
		withToken(httptest.NewRequest("GET", "/api/ping", nil)),
		withToken(httptest.NewRequest("POST", "/api/upload", strings.NewReader(strings.Repeat("x", 11<<20)))),
	} {
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// 401 Unauthorized
	// 200 pong
	// 200 11534336 bytes
}

func requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func withToken(r *http.Request) *http.Request {
	r.Header.Set("Authorization", "Bearer secret")
	return r
}

func ExampleApp_Serve() {
	app := web.MustNew(web.WithExecutor(loom.Virtual()), web.WithLogger(slog.New(slog.DiscardHandler)))
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "Hello World!")
		return err
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0") // app.Run(":8080") in a real program
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.Serve(ctx, ln) }() // until ctx ends, then a graceful shutdown

	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(body))
	}
	stop()
	fmt.Println("served:", errors.Join(err, <-served))
	// Output:
	// 200 Hello World!
	// served: <nil>
}

func ExampleCompress() {
	app := web.MustNew(web.WithExecutor(loom.Virtual()), web.WithDecorators(web.Compress)) // or per group or route
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, strings.Repeat("loom ", 1000))
		return err
	})
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, req)
	fmt.Println(rec.Header().Get("Content-Encoding"), rec.Body.Len() < 5000)
	// Output: gzip true
}

func ExampleWithProbes() {
	var databaseUp = true
	app := web.MustNew(web.WithExecutor(loom.Virtual()),
		web.WithProbes(), // GET /livez, GET /readyz
		web.WithReadyCheck("database", func(ctx context.Context) error {
			if !databaseUp {
				return errors.New("connection refused")
			}
			return nil // a real check pings the pool: db.PingContext(ctx)
		}))
	defer app.Shutdown(context.Background())

	probe := func(target string) {
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		fmt.Print(rec.Code, "\n", rec.Body.String())
	}
	probe("/readyz")
	databaseUp = false
	probe("/readyz")
	probe("/livez") // liveness does not follow dependencies
	// Output:
	// 200
	// ok
	// 503
	// [+]shutdown ok
	// [+]threads ok
	// [-]database failed: connection refused
	// readyz check failed
	// 200
	// ok
}

func ExampleWithTLS() {
	// A PEM certificate chain and key, as cert-manager or a CA hands them out;
	// HTTP/2 is offered by ALPN beside HTTP/1.1.
	app, err := web.New(web.WithTLS("/etc/loom-example/tls.crt", "/etc/loom-example/tls.key"))
	if err != nil {
		fmt.Println(err) // names the file that cannot be read
		return
	}
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "Hello over "+r.Proto)
		return err
	})
	_ = app.Run(":8443")
	// Output: web: TLS certificate: open /etc/loom-example/tls.crt: no such file or directory
}
