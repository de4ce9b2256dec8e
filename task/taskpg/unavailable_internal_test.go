package taskpg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, refused := pgconn.Connect(ctx, "postgres://postgres@"+closedPort+"/test?sslmode=disable")
	if refused == nil {
		t.Fatal("connected to a closed port")
	}
	// A server that accepts and never answers: the connection times out.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := silent.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	_, timedOut := pgconn.Connect(ctx, "postgres://postgres@"+silent.Addr().String()+"/test?sslmode=disable&connect_timeout=1")
	silent.Close()
	for c := range accepted {
		c.Close()
	}
	if timedOut == nil {
		t.Fatal("connected to a server that never answers")
	}
	cancelled, cancelNow := context.WithCancel(ctx)
	cancelNow()
	_, gaveUp := pgconn.Connect(cancelled, "postgres://postgres@"+closedPort+"/test?sslmode=disable")
	pg := func(code string) error { return &pgconn.PgError{Severity: "FATAL", Code: code} }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection refused", refused, true},
		{"connection timed out", timedOut, true},
		{"dial error", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"end of stream", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), true},
		{"EOF", io.EOF, true},
		{"conn closed", fmt.Errorf("acquire: %w", pgconn.ErrConnClosed), true},
		{"admin shutdown 57P01", pg("57P01"), true},
		{"admin shutdown, wrapped", fmt.Errorf("exec: %w", pg("57P01")), true},
		{"crash shutdown 57P02", pg("57P02"), true},
		{"starting up 57P03", pg("57P03"), true},
		{"connection failure 08006", pg("08006"), true},
		{"too many connections 53300", pg("53300"), true},
		{"disk full 53100", pg("53100"), true},
		{"serialization failure 40001", pg("40001"), true},
		{"deadlock 40P01", pg("40P01"), true},
		{"read-only standby 25006", pg("25006"), true},
		{"undefined table 42P01", pg("42P01"), false},
		{"permission denied 42501", pg("42501"), false},
		{"password failed 28P01", pg("28P01"), false},
		{"unknown database 3D000", pg("3D000"), false},
		{"unique violation 23505", pg("23505"), false},
		{"query canceled 57014", pg("57014"), false},
		{"caller cancelled", fmt.Errorf("exec: %w", context.Canceled), false},
		{"caller cancelled while connecting", gaveUp, false},
		{"caller's deadline", context.DeadlineExceeded, false},
		{"closed pool", errors.New("closed pool"), false},
	} {
		if got := unavailable(tc.err); got != tc.want {
			t.Errorf("%s (%v): got %v; want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
