package nbio_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// TestBodyRules: body limits and timeouts that differ by route behave the
// same on both engines, although nbio reads a whole body before routing.
func TestBodyRules(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.WithBodyLimit(1000), web.WithBodyTimeout(200*time.Millisecond))
			read := func(w http.ResponseWriter, r *http.Request) error {
				b, err := io.ReadAll(r.Body)
				if err != nil {
					return err
				}
				_, err = io.WriteString(w, "read "+strconv.Itoa(len(b)))
				return err
			}
			app.Post("/small", read)
			app.Post("/upload", read, web.WithBodyLimit(5000), web.WithBodyTimeout(time.Minute))
			base, _ := webtest.Serve(t, app)
			addr := strings.TrimPrefix(base, "http://")
			post := func(path string, n int) string {
				return "POST " + path + " HTTP/1.1\r\nHost: a\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n" + strings.Repeat("a", n)
			}

			// A declared body over every limit is refused from its headers,
			// before any of it is sent.
			if got := statusOf(t, addr, "POST /small HTTP/1.1\r\nHost: a\r\nContent-Length: 1073741824\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 413") {
				t.Errorf("1 GiB declared, none sent: got %q; want 413", got)
			}
			// A route's own larger limit holds; the App's holds elsewhere.
			if got := statusOf(t, addr, post("/upload", 3000)); !strings.HasPrefix(got, "HTTP/1.1 200") {
				t.Errorf("3000 bytes to a route taking 5000: got %q; want 200", got)
			}
			if got := statusOf(t, addr, post("/small", 3000)); !strings.HasPrefix(got, "HTTP/1.1 413") {
				t.Errorf("3000 bytes to a route taking 1000: got %q; want 413", got)
			}

			// A body that pauses for longer than the App's body timeout but
			// arrives well within the route's own is read whole.
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			if _, err := io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nhalf "); err != nil {
				t.Fatal(err)
			}
			time.Sleep(600 * time.Millisecond) // three App body timeouts
			if _, err := io.WriteString(c, "done!"); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("slow upload to a route with a long body timeout: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != "read 10" {
				t.Errorf("slow upload to a route with a long body timeout: got %d %q; want 200 \"read 10\"", resp.StatusCode, b)
			}
		})
	}
}
