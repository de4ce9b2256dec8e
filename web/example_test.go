package web_test

import (
	"context"
	"fmt"
	"io"
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
		return map[string]string{"greeting": "Hello, " + in.Name, "lang": web.Param(r, "lang")}, nil
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

func ExampleDisallowUnknownFields() {
	type transfer struct {
		To     string `json:"to"`
		Cents  int    `json:"cents"`
		DryRun bool   `json:"dry_run"`
	}
	app := web.MustNew(web.WithExecutor(loom.Virtual()))
	app.Post("/transfers", web.JSON(func(r *http.Request, in transfer) (transfer, error) {
		return in, nil // a real handler would move the money unless in.DryRun
	}, web.DisallowUnknownFields()))

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

func ExampleParamInt() {
	app := web.MustNew(web.WithExecutor(loom.Virtual()))
	app.Get("/items/{id}", func(w http.ResponseWriter, r *http.Request) error {
		id, err := web.ParamInt(r, "id")
		if err != nil {
			return err // a 400 naming the parameter
		}
		_, err = fmt.Fprintf(w, "item %d\n", id)
		return err
	})
	for _, path := range []string{"/items/42", "/items/forty-two"} {
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// 200 item 42
	// 400 path parameter "id": "forty-two" is not an integer
}

func ExampleExecutor() {
	app := web.MustNew(web.WithExecutor(loom.Virtual()))
	defer app.Shutdown(context.Background())
	// The slow route gets its own bounded executor (LOOM_EXECUTOR_REPORTS
	// overrides the spec): when it is full, only /report gets 503s.
	reports, err := app.NewExecutor("reports", "limit:8")
	if err != nil {
		fmt.Println(err)
		return
	}
	app.Get("/report", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "report\n")
		return err
	}, web.Executor(reports))

	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, httptest.NewRequest("GET", "/report", nil))
	fmt.Print(rec.Body.String(), reports.Stats().Kind, " ", reports.Stats().Completed, "\n")
	// Output:
	// report
	// limit 1
}

func ExampleCompress() {
	app := web.MustNew(web.WithExecutor(loom.Virtual()))
	app.Use(web.Compress) // or per route: web.Use(web.Compress)
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
