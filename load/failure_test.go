package load

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"reflect"
	"syscall"
	"testing"
	"time"
)

func TestClassifyDial(t *testing.T) {
	// Real errors from the net package, not hand-made ones: their types are
	// what classifyDial has to recognise.
	closedAddr := refusedAddr(t)

	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	var d net.Dialer
	_, timeoutErr := d.DialContext(expired, "tcp", closedAddr)
	_, refusedErr := d.DialContext(context.Background(), "tcp", closedAddr)

	for _, tc := range []struct {
		name string
		err  error
		want failure
	}{
		{"timed out", timeoutErr, failConnect}, // not accepting, rather than slow: see classifyDial
		{"refused", refusedErr, failRefused},
		{"other", errors.New("no route"), failConnect},
	} {
		if tc.err == nil {
			t.Fatalf("%s: the dial succeeded; want an error", tc.name)
		}
		if got := classifyDial(tc.err); got != tc.want {
			t.Errorf("classifyDial(%v) = %d; want %d", tc.err, got, tc.want)
		}
	}
}

func TestEveryFailureKindIsCounted(t *testing.T) {
	// Each kind between ok and aborted lands in its own Errors field, and
	// Total, merge and the JSON encoding see every field: a kind added
	// later cannot be dropped from one of them unnoticed.
	var e Errors
	for f := ok + 1; f < aborted; f++ {
		e.add(f)
	}
	fields := reflect.ValueOf(e)
	if got, want := fields.NumField(), int(aborted-ok-1); got != want {
		t.Fatalf("Errors has %d fields; want one per failure kind, %d", got, want)
	}
	for i := range fields.NumField() {
		if got := fields.Field(i).Int(); got != 1 {
			t.Errorf("Errors.%s = %d after adding every kind once; want 1", fields.Type().Field(i).Name, got)
		}
	}
	if got, want := e.Total(), int64(aborted-ok-1); got != want {
		t.Errorf("Total() = %d; want %d", got, want)
	}
	e.merge(e)
	if got, want := e.Total(), 2*int64(aborted-ok-1); got != want {
		t.Errorf("Total() after merging with itself = %d; want %d", got, want)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back Errors
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != e {
		t.Errorf("JSON round trip of %s = %+v; want %+v", b, back, e)
	}
}

// TestResetsAreClosedByPeer classifies each error that says the server
// dropped the connection: a reset read and a write into a connection
// already shut down (EPIPE), both real, and ECONNABORTED, which Linux
// reports on accept and not to a client but BSDs, macOS and Windows can
// return from a read; it is made the way net wraps a read's errno. Each is
// a reset, and lets a replayable request go again.
func TestResetsAreClosedByPeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dial := func() (client, server *net.TCPConn) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return c.(*net.TCPConn), s.(*net.TCPConn)
	}

	c, s := dial()
	_ = s.SetLinger(0)
	s.Close()
	_, resetErr := c.Read(make([]byte, 1))
	c.Close()

	c, s = dial()
	_ = c.CloseWrite()
	_, pipeErr := c.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	c.Close()
	s.Close()

	for _, tc := range []struct {
		name  string
		err   error
		errno syscall.Errno
	}{
		{"reset", resetErr, syscall.ECONNRESET},
		{"broken pipe", pipeErr, syscall.EPIPE},
		{"aborted", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNABORTED)}, syscall.ECONNABORTED},
	} {
		if !errors.Is(tc.err, tc.errno) {
			t.Fatalf("%s: got %v; want an error matching %v", tc.name, tc.err, tc.errno)
		}
		if got := classify(tc.err, failWrite); got != failReset || !closedByPeer(tc.err) {
			t.Errorf("%s: classify(%v) = %d, closedByPeer %t; want %d and true", tc.name, tc.err, got, closedByPeer(tc.err), failReset)
		}
	}
}
