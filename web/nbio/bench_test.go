package nbio_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/loomrt/loom/web/internal/webtest"
)

// BenchmarkHello is the hello handler on each engine, served to one
// keep-alive connection that sends a GET with a browser's few header
// fields and reads the answer before the next: the engine's share of a
// request, its checks included.
func BenchmarkHello(b *testing.B) {
	for _, eng := range engines {
		b.Run(eng.name, func(b *testing.B) {
			app := newApp(b, eng.engine)
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, "Hello World!")
				return err
			})
			base := serve(b, app)
			c := webtest.Dial(b, base)
			req := "GET / HTTP/1.1\r\nHost: " + base[len("http://"):] + "\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n" +
				"Accept: text/html,application/xhtml+xml\r\nAccept-Encoding: gzip, deflate\r\nAccept-Language: en-GB,en;q=0.9\r\n\r\n"
			br := bufio.NewReader(c)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := io.WriteString(c, req); err != nil {
					b.Fatal(err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || n != 12 {
					b.Fatalf("got %d with %d bytes; want 200 with 12", resp.StatusCode, n)
				}
			}
		})
	}
}

// BenchmarkNewConnection is a connection per request on each engine: dial,
// one GET with Connection: close, read the answer, close. On nbio it
// includes the accept fence's poller wake-up (fence.go).
func BenchmarkNewConnection(b *testing.B) {
	for _, eng := range engines {
		b.Run(eng.name, func(b *testing.B) {
			app := newApp(b, eng.engine)
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, "Hello World!")
				return err
			})
			base := serve(b, app)
			req := "GET / HTTP/1.1\r\nHost: " + base[len("http://"):] + "\r\nConnection: close\r\n\r\n"
			for b.Loop() {
				c, err := net.Dial("tcp", base[len("http://"):])
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.WriteString(c, req); err != nil {
					b.Fatal(err)
				}
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				c.Close()
				if resp.StatusCode != 200 || n != 12 {
					b.Fatalf("got %d with %d bytes; want 200 with 12", resp.StatusCode, n)
				}
			}
		})
	}
}

// BenchmarkPipelined is the hello handler on each engine, served to one
// keep-alive connection that sends 16 GETs in one write and reads the 16
// answers before the next batch: an op is a batch. On nbio the answers of
// a batch go out in one write (respond.go).
func BenchmarkPipelined(b *testing.B) {
	const depth = 16
	for _, eng := range engines {
		b.Run(eng.name, func(b *testing.B) {
			app := newApp(b, eng.engine)
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, "Hello World!")
				return err
			})
			base := serve(b, app)
			c := webtest.Dial(b, base)
			one := "GET / HTTP/1.1\r\nHost: " + base[len("http://"):] + "\r\nUser-Agent: loom\r\n\r\n"
			batch := strings.Repeat(one, depth)
			br := bufio.NewReader(c)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := io.WriteString(c, batch); err != nil {
					b.Fatal(err)
				}
				for range depth {
					resp, err := http.ReadResponse(br, nil)
					if err != nil {
						b.Fatal(err)
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 || n != 12 {
						b.Fatalf("got %d with %d bytes; want 200 with 12", resp.StatusCode, n)
					}
				}
			}
		})
	}
}
