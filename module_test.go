package loom_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLibraryModuleIsLean builds the module graph a service importing the
// library sees: a scratch module that imports loom, web, task and actor,
// tidied on its own (no go.work). The tools' dependencies (the benchmark's
// command line, charts, browser and embedded database) live in the tools'
// modules and must not reach it. Nor may the program link the optional
// dependencies whose sub-packages it does not import: Prometheus
// (web/metrics, task/taskmetrics) and OpenTelemetry (web/otelweb,
// task/oteltask, actor/otelactor), though its module graph lists them.
func TestLibraryModuleIsLean(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy")
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/service\n\ngo 1.26.0\n\n" +
			"require github.com/loomrt/loom v0.0.0\n\nreplace github.com/loomrt/loom => " + root + "\n",
		"main.go": "package main\n\nimport (\n" +
			"\t_ \"github.com/loomrt/loom\"\n\t_ \"github.com/loomrt/loom/actor\"\n" +
			"\t_ \"github.com/loomrt/loom/task\"\n\t_ \"github.com/loomrt/loom/web\"\n)\n\nfunc main() {}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("mod", "tidy")
	for _, dep := range strings.Fields(goCmd("list", "-deps", ".")) {
		if strings.Contains(dep, "opentelemetry") || strings.Contains(dep, "prometheus") || strings.Contains(dep, "coder/websocket") {
			t.Errorf("a program importing loom, web, task and actor links %s; want it only in programs that import its sub-package", dep)
		}
	}
	modules := goCmd("list", "-m", "all")
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"github.com/spf13/cobra", "github.com/chromedp/", "github.com/go-echarts/", "modernc.org/"} {
		if strings.Contains(modules, tool) {
			t.Errorf("go list -m all of a module importing the library lists %s; want it only in the tools' modules", tool)
		}
		if strings.Contains(string(sum), tool) {
			t.Errorf("go.sum of a module importing the library holds %s; want it only in the tools' modules", tool)
		}
	}
}
