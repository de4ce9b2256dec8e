package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
		{"missing certificate", []string{"-db", filepath.Join(t.TempDir(), "t.db"), "-tls-cert", "/nonexistent/cert.pem", "-tls-key", "/nonexistent/key.pem"}, noEnv, "/nonexistent/cert.pem"},
		{"key without certificate", []string{"-db", filepath.Join(t.TempDir(), "t.db"), "-tls-key", "/nonexistent/key.pem"}, noEnv, "both a certificate file and a key file"},
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

// TestRunServes starts the command on SQLite and fetches the API.
func TestRunServes(t *testing.T) {
	serveAndStop(t, []string{"-db", filepath.Join(t.TempDir(), "todo.db")}, func(string) string { return "" })
}

// TestRunPostgres starts the command with LOOM_DATABASE_URL set, on a
// schema of its own that it drops at the end.
func TestRunPostgres(t *testing.T) {
	url := testPostgresURL(t)
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("todo_main_test_%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close(ctx)
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		admin.Close(ctx)
	}()

	getenv := func(k string) string {
		if k == "LOOM_DATABASE_URL" {
			return url + "&search_path=" + schema
		}
		return ""
	}
	serveAndStop(t, []string{"-db", "/nonexistent/dir/ignored.db"}, getenv)

	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM "+schema+".todos").Scan(&n); err != nil || n != 1 {
		t.Errorf("todos in PostgreSQL after one POST: got %d, %v; want 1", n, err)
	}
}

// testPostgresURL returns a reachable test database URL (with a query), or
// fails when CI is set and skips otherwise.
func testPostgresURL(t *testing.T) string {
	t.Helper()
	var err error
	for _, user := range []string{"postgres", "root"} {
		url := "postgres://" + user + "@127.0.0.1:5432/test?sslmode=disable&connect_timeout=5"
		var conn *pgx.Conn
		if conn, err = pgx.Connect(t.Context(), url); err == nil {
			conn.Close(t.Context())
			return url
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("PostgreSQL unreachable and CI is set: %v", err)
	}
	t.Skipf("PostgreSQL unreachable: %v", err)
	return ""
}

// serveAndStop runs the command on a free port, creates a todo through the
// API, then cancels the context and expects a clean shutdown.
func serveAndStop(t *testing.T, args []string, getenv func(string) string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // run listens itself; another process taking the port meanwhile is unlikely

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"-addr", addr}, args...), getenv) }()

	var resp *http.Response
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err = http.Post("http://"+addr+"/api/todos", "application/json", strings.NewReader(`{"text":"from main"}`))
		if err == nil {
			break
		}
		select {
		case runErr := <-done:
			t.Fatalf("run ended before serving: %v", runErr)
		default:
		}
	}
	if err != nil {
		cancel()
		t.Fatalf("server did not come up: %v (run: %v)", err, <-done)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("POST /api/todos: got status %d; want 201", resp.StatusCode)
	}
	http.DefaultClient.CloseIdleConnections()

	cancel()
	if err := <-done; err != nil {
		t.Errorf("run after cancel: got %v; want nil", err)
	}
}
