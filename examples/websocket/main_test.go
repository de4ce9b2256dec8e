package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRunBadInput(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown flag", []string{"-port", "80"}, "flag provided but not defined: -port"},
		{"extra argument", []string{"serve"}, `unexpected argument "serve"`},
		{"bad queue", []string{"-queue", "0"}, "-queue 0: want a positive number"},
		{"bad listen address", []string{"-addr", "127.0.0.1:notaport"}, "listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(t.Context(), tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("run(%q): got %v; want an error containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

// TestRunServes starts the command on a free port, echoes one message, then
// cancels the context: the open socket must be told the server is going
// away and run must return cleanly.
func TestRunServes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // run listens itself; another process taking the port meanwhile is unlikely

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", addr}) }()

	var conn *websocket.Conn
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if conn, _, err = websocket.Dial(t.Context(), "ws://"+addr+"/ws?mode=echo", nil); err == nil {
			break
		}
	}
	if err != nil {
		cancel()
		t.Fatalf("server did not come up: %v (run: %v)", err, <-done)
	}
	defer conn.CloseNow()
	if err := conn.Write(t.Context(), websocket.MessageText, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := conn.Read(t.Context()); err != nil || string(msg) != "ping" {
		t.Fatalf("echo: got %q, %v; want ping", msg, err)
	}

	cancel()
	readCtx, readCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer readCancel()
	if _, _, err := conn.Read(readCtx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("after shutdown got %v; want close status %v", err, websocket.StatusGoingAway)
	}
	if err := <-done; err != nil {
		t.Errorf("run after cancel: got %v; want nil", err)
	}
}
