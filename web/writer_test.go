package web_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// observedOnce sends each Response an Observer is told about on a channel.
type observedOnce chan web.Response

func (o observedOnce) Observe(_ *http.Request, resp web.Response) { o <- resp }

// TestObserversSeeAnUpgrade: a handler that switches protocols as a
// WebSocket library does (101, then Hijack) is observed with its 101, not
// as the empty 200 of a handler that wrote nothing. (writer.go,
// WriteHeader's status == http.StatusSwitchingProtocols.)
func TestObserversSeeAnUpgrade(t *testing.T) {
	app := newApp(t)
	o := make(observedOnce, 1)
	app.Observe(o)
	app.Get("/upgrade", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Upgrade", "test")
		w.Header().Set("Connection", "Upgrade")
		w.WriteHeader(http.StatusSwitchingProtocols)
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return err
		}
		return c.Close()
	})
	url, _ := serveApp(t, app)
	c := webtest.Dial(t, url)
	if _, err := c.Write([]byte("GET /upgrade HTTP/1.1\r\nHost: a\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(c).ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 101 ") {
		t.Fatalf("got %q, %v; want a 101", line, err)
	}
	select {
	case resp := <-o:
		if resp.Status != http.StatusSwitchingProtocols {
			t.Errorf("observers got status %d; want 101", resp.Status)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no observation in 20s")
	}
}
