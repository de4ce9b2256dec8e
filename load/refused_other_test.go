//go:build !unix

package load

import (
	"net"
	"testing"
)

// refusedAddr returns a loopback address that refuses connections: one
// found by listening and closing, which another process may take meanwhile
// (the unix version holds the port instead).
func refusedAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
