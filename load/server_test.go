package load

import (
	"net"
	"sync"
	"testing"
)

// tcpServer listens on a local TCP port and calls serve on its own goroutine
// for each connection it accepts, closing the connection when serve returns.
// It returns the server's base URL. At the test's end it stops listening and
// waits for every serve to return (each returns once the client closes its
// end), so no goroutine outlives the test.
func tcpServer(tb testing.TB, serve func(c net.Conn)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				serve(c)
			})
		}
	})
	tb.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return "http://" + ln.Addr().String() + "/"
}
