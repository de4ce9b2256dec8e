package main

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRunBadInput(t *testing.T) {
	noEnv := func(string) string { return "" }
	tests := []struct {
		name    string
		args    []string
		getenv  func(string) string
		wantErr string
	}{
		{"unknown flag", []string{"-port", "80"}, noEnv, "flag provided but not defined: -port"},
		{"extra argument", []string{"serve"}, noEnv, `unexpected argument "serve"`},
		{"bad database url", nil, func(k string) string {
			if k == "LOOM_DATABASE_URL" {
				return "postgres://host:notaport/db"
			}
			return ""
		}, "open postgres"},
		{"bad listen address", []string{"-addr", "256.0.0.1:80", "-db", filepath.Join(t.TempDir(), "t.db")}, noEnv, "listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(t.Context(), tt.args, tt.getenv)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("run(%q): got %v; want an error containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

// TestRunServes starts the command on a free port, fetches the page and the
// API, then cancels the context and expects a clean shutdown.
func TestRunServes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // run listens itself; another process taking the port meanwhile is unlikely

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", addr, "-db", filepath.Join(t.TempDir(), "todo.db")},
			func(string) string { return "" })
	}()

	var resp *http.Response
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err = http.Get("http://" + addr + "/api/todos"); err == nil {
			break
		}
	}
	if err != nil {
		cancel()
		t.Fatalf("server did not come up: %v (run: %v)", err, <-done)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/todos: got status %d; want 200", resp.StatusCode)
	}
	http.DefaultClient.CloseIdleConnections()

	cancel()
	if err := <-done; err != nil {
		t.Errorf("run after cancel: got %v; want nil", err)
	}
}
