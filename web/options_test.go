package web_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
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
