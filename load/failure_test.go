package load

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

func TestClassifyDial(t *testing.T) {
	// Real errors from the net package, not hand-made ones: their types are
	// what classifyDial has to recognise.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close() // nothing listens there now: refused

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
