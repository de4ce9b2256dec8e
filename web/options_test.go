package web_test

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

// TestOptionsCompileWhereTheyFit type-checks calls against the compiled web
// package: each option compiles where it applies, and an option given where
// it does not apply is a compile error naming the kind it lacks, not a panic
// at start-up.
func TestOptionsCompileWhereTheyFit(t *testing.T) {
	check := typeChecker(t)
	fits := []string{
		`web.New(web.WithLogger(nil), web.WithAccessLog(), web.WithEngine(nil), web.WithoutThreadWatch())`,
		`web.New(web.WithExecutor(e), web.WithBodyLimit(1), web.WithDecorators(), web.WithDotfiles())`,
		`web.MustNew(web.WithShutdownGrace(0), web.WithWriteTimeout(0), web.WithServerConfig(nil), web.WithDebug())`,
		`app.Group("/g", web.WithExecutorFromEnv("g", ""), web.WithBodyTimeout(0), web.WithDotfiles()).Get("/", h, web.WithBlocking())`,
		`app.Static("/s/", nil, web.WithDotfiles(), web.WithExecutor(e))`,
		`app.Handle("GET", "/", h, web.WithBodyLimit(1))`,
		`web.Files(nil, "path", web.WithDotfiles())`,
		`web.JSON(jsonFn, web.WithDisallowUnknownFields())`,
		`web.ReadJSON(nil, nil, web.WithDisallowUnknownFields())`,
	}
	for _, call := range fits {
		if err := check(call); err != nil {
			t.Errorf("%s: %v; want it to compile", call, err)
		}
	}
	misplaced := []struct{ call, want string }{
		{`app.Get("/", h, web.WithLogger(nil))`, "web.AppOption does not implement web.RouteOption"},
		{`app.Group("/g", web.WithAccessLog())`, "web.AppOption does not implement web.RouteOption"},
		{`app.Post("/", h, web.WithoutThreadWatch())`, "web.AppOption does not implement web.RouteOption"},
		{`app.Get("/", h, web.WithDisallowUnknownFields())`, "web.JSONOption does not implement web.RouteOption"},
		{`web.New(web.WithDisallowUnknownFields())`, "web.JSONOption does not implement web.AppOption"},
		{`web.JSON(jsonFn, web.WithExecutor(e))`, "web.Option does not implement web.JSONOption"},
		{`web.ReadJSON(nil, nil, web.WithBodyLimit(1))`, "web.Option does not implement web.JSONOption"},
		{`web.Files(nil, "path", web.WithBodyLimit(1))`, "web.Option does not implement web.FilesOption"},
		{`web.Files(nil, "path", web.WithDebug())`, "web.AppOption does not implement web.FilesOption"},
	}
	for _, tt := range misplaced {
		err := check(tt.call)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v; want a compile error saying %q", tt.call, err, tt.want)
		}
	}
}

// typeChecker returns a function that type-checks one call expression in a
// function where app is a *web.App, h a web.HandlerFunc, e a loom.Executor
// and jsonFn a JSON handler function. It imports the export data the go
// command builds for web and its dependencies.
func typeChecker(t *testing.T) func(call string) error {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the export data:", err)
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(goCmd, "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}",
		"github.com/loomrt/loom/web", "net/http")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	for line := range strings.Lines(out.String()) {
		path, file, _ := strings.Cut(strings.TrimSpace(line), "\t")
		exports[path] = file
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(file)
	})
	return func(call string) error {
		src := `package p

import (
	"net/http"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
)

func _(app *web.App, h web.HandlerFunc, e loom.Executor, jsonFn func(*http.Request, web.Empty) (int, error)) {
	` + call + `
}
`
		f, err := parser.ParseFile(fset, "p.go", src, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", call, err)
		}
		conf := types.Config{Importer: imp}
		_, err = conf.Check("p", fset, []*ast.File{f}, nil)
		return err
	}
}

// TestNilOptionsAreIgnored checks that a nil option, at every place options
// are taken, changes nothing instead of panicking, so that a caller can
// leave an optional option unset.
func TestNilOptionsAreIgnored(t *testing.T) {
	app, err := web.New(nil, web.WithExecutor(loom.Virtual()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Shutdown(context.Background())
	app.Group("/g", nil).Get("/x", text("x"), nil)
	app.Static("/s/", fstest.MapFS{"a": {Data: []byte("a")}}, nil)
	app.Get("/f/{path...}", web.Files(fstest.MapFS{"b": {Data: []byte("b")}}, "path", nil))
	app.Post("/j", web.JSON(func(_ *http.Request, in struct{ N int }) (int, error) { return in.N, nil }, nil))
	for _, tt := range []struct{ method, path, body, want string }{
		{"GET", "/g/x", "", "x"},
		{"GET", "/s/a", "", "a"},
		{"GET", "/f/b", "", "b"},
		{"POST", "/j", `{"N": 7}`, "7\n"},
	} {
		rec := do(t, app, tt.method, tt.path, tt.body)
		if rec.Code != http.StatusOK || rec.Body.String() != tt.want {
			t.Errorf("%s %s: got %d %q; want 200 %q", tt.method, tt.path, rec.Code, rec.Body.String(), tt.want)
		}
	}
}
