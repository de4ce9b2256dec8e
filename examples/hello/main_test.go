package main

import (
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/loomrt/loom/internal/harness/cmdtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestHello(t *testing.T) {
	for _, engine := range []string{"std", "nbio"} {
		t.Run(engine, func(t *testing.T) {
			t.Setenv("LOOM_ENGINE", engine) // the README's switch: hello links web/nbio
			testHello(t)
		})
	}
}

func testHello(t *testing.T) {
	app, err := newApp()
	if err != nil {
		t.Fatal(err)
	}
	url := cmdtest.Serve(t, app)

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	tests := []struct {
		path   string
		status int
		body   string
	}{
		{"/", http.StatusOK, "Hello World!"},
		{"/missing", http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		resp, err := client.Get(url + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("GET %s: got status %d; want %d", tt.path, resp.StatusCode, tt.status)
		}
		if tt.body != "" && string(body) != tt.body {
			t.Errorf("GET %s: got body %q; want %q", tt.path, body, tt.body)
		}
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  string
	}{
		{"unknown flag", []string{"-nope"}, ""},
		{"bad executor spec", nil, "pool:x"},
		{"bad address", []string{"-addr", "127.0.0.1:99999"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LOOM_EXECUTOR", tt.env)
			if err := run(t.Context(), tt.args); err == nil {
				t.Errorf("run(%q) with LOOM_EXECUTOR=%q: got nil error; want one", tt.args, tt.env)
			}
		})
	}
}

func TestRunStopsCleanly(t *testing.T) {
	cmdtest.StopsCleanly(t, run, "-addr", "127.0.0.1:0")
}

func TestRunRejectsArguments(t *testing.T) {
	cmdtest.RejectsStrayArgument(t, run, "-addr", "127.0.0.1:0")
}

// TestHelloLinksNoOptionalDependency checks that a plain web program links
// neither Prometheus, WebSockets nor OpenTelemetry: they live in
// web/metrics, web/websocket and the otel sub-packages (web/otelweb,
// task/oteltask, actor/otelactor), which only their users import; web, task
// and actor carry only the hooks those packages set.
func TestHelloLinksNoOptionalDependency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "prometheus") || strings.Contains(dep, "coder/websocket") || strings.Contains(dep, "opentelemetry") {
			t.Errorf("hello links %s; want it only in programs that import web/metrics, web/websocket or an otel sub-package", dep)
		}
	}
}
