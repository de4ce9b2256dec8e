package load

import (
	"context"
	"net"
	"testing"
	"time"
)

// cannedServer answers every request on every connection with the same
// pre-built response, allocating nothing per request, so that allocation
// figures measure the client alone. Requests must have no body.
func cannedServer(tb testing.TB) string {
	tb.Helper()
	response := []byte("HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n\r\nHello World!")
	return tcpServer(tb, func(c net.Conn) {
		buf := make([]byte, 16<<10)
		matched := 0 // bytes of "\r\n\r\n" seen so far
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			for _, b := range buf[:n] {
				switch {
				case b == "\r\n\r\n"[matched]:
					matched++
				case b == '\r':
					matched = 1
				default:
					matched = 0
				}
				if matched == 4 {
					matched = 0
					if _, err := c.Write(response); err != nil {
						return
					}
				}
			}
		}
	})
}

// testWorker returns a worker of a runner set up as Run would, and a
// function that ends it.
func testWorker(tb testing.TB, cfg Config) (*worker, func()) {
	tb.Helper()
	r, err := newRunner(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.start = time.Now()
	w := r.addWorker()
	return w, func() {
		w.finish()
		r.stop()
	}
}

// exchangeOnce is the closed-loop hot path for one request. It returns how
// the request ended and the status code of its response.
func exchangeOnce(w *worker) (failure, int) {
	start := time.Now()
	f, status := w.exchange(0, start)
	end := time.Now()
	w.record(f, status, end, end.Sub(start))
	return f, status
}

// cannedConfig is a run against cannedServer that serves a request only
// when its status is 200 and its body holds the canned one's word, so that
// a benchmark cannot time a broken exchange as a fast one.
func cannedConfig(tb testing.TB) Config {
	return Config{
		Targets:      []Target{{URL: cannedServer(tb)}},
		ExpectStatus: func(code int) bool { return code == 200 },
		ExpectBody:   []byte("World"),
	}
}

func TestExchangeDoesNotAllocate(t *testing.T) {
	w, done := testWorker(t, cannedConfig(t))
	defer done()
	for range 10 { // connect, and let the status map and body buffer grow
		if f, status := exchangeOnce(w); f != ok || status != 200 {
			t.Fatalf("exchange: failure %d, status %d; want ok, 200", f, status)
		}
	}
	allocs := testing.AllocsPerRun(2000, func() {
		if f, status := exchangeOnce(w); f != ok || status != 200 {
			t.Fatalf("exchange: failure %d, status %d; want ok, 200", f, status)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per request; want 0", allocs)
	}
}

// BenchmarkExchange measures the client's cost per request on one
// keep-alive connection: write the pre-built request, parse the response,
// record the latency. The server is a canned responder in this process.
func BenchmarkExchange(b *testing.B) {
	w, done := testWorker(b, cannedConfig(b))
	defer done()
	exchangeOnce(w)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if f, status := exchangeOnce(w); f != ok || status != 200 {
			b.Fatalf("exchange: failure %d, status %d; want ok, 200", f, status)
		}
	}
}

// BenchmarkParseResponse measures the response parser alone.
func BenchmarkParseResponse(b *testing.B) {
	const resp = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Sun, 29 Nov 2026 23:00:00 GMT\r\n\r\nHello World!"
	src := &repeatReader{data: []byte(resp)}
	br := newTestReader(src)
	// One response read in full, then each checked by status and length, so
	// that a broken parser cannot look fast.
	parse := func(keep *[]byte) {
		var h responseHead
		if _, err := readHead(br, &h); err != nil {
			b.Fatal(err)
		}
		n, err := readBody(br, &h, false, keep)
		if err != nil {
			b.Fatal(err)
		}
		if h.status != 200 || n != int64(len("Hello World!")) {
			b.Fatalf("parsed status %d, %d body bytes; want 200, %d", h.status, n, len("Hello World!"))
		}
	}
	var body []byte
	parse(&body)
	if string(body) != "Hello World!" {
		b.Fatalf("parsed body %q; want Hello World!", body)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(resp)))
	for b.Loop() {
		parse(nil)
	}
}
