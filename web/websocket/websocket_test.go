package websocket_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
	"github.com/loomrt/loom/web/metrics"
	"github.com/loomrt/loom/web/nbio"
	wsweb "github.com/loomrt/loom/web/websocket"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// engines are the connection engines every App test runs on: nil is
// net/http's. On nbio the standard upgrade works through the engine's own
// Hijack.
var engines = []struct {
	name   string
	engine web.Engine
}{{"std", nil}, {"nbio", nbio.Engine()}}

// newApp is webtest.NewApp on engine e (nil: net/http).
func newApp(t *testing.T, e web.Engine, opts ...web.AppOption) *web.App {
	t.Helper()
	if e != nil {
		opts = append(opts, web.WithEngine(e))
	}
	return webtest.NewApp(t, append(opts, web.WithoutThreadWatch())...)
}

// serveApp serves app with Serve, on its engine, until t's cleanup, and
// returns its base URL with a context that bounds the test to a minute: a
// guard against a hang, generous for a busy machine under -race.
func serveApp(t *testing.T, app *web.App) (context.Context, string) {
	t.Helper()
	url, _ := webtest.Serve(t, app)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx, url
}

// wsURL is the ws:// URL of path on base, an http:// URL.
func wsURL(base, path string) string {
	return "ws" + strings.TrimPrefix(base, "http") + path
}

func TestWebSocketEcho(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) { testEcho(t, eng.engine) })
	}
}

func testEcho(t *testing.T, e web.Engine) {
	// The access log, metrics and compression wrap the writer: the upgrade must get through.
	app := newApp(t, e, web.WithAccessLog(), web.WithDecorators(web.Compress))
	metrics.Mount(app, "/metrics")
	app.Get("/ws", wsweb.Handler(webtest.Echo, wsweb.WithOrigins("trusted.example")))
	ctx, base := serveApp(t, app)
	url := wsURL(base, "/ws")

	for _, origin := range []string{"", base, "http://trusted.example"} {
		header := http.Header{}
		if origin != "" {
			header.Set("Origin", origin)
		}
		c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: header})
		if err != nil {
			t.Fatalf("dial with Origin %q: %v", origin, err)
		}
		for _, msg := range []string{"hello", "world"} {
			if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
				t.Fatal(err)
			}
			_, got, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != msg {
				t.Errorf("echo: got %q; want %q", got, msg)
			}
		}
		c.Close(websocket.StatusNormalClosure, "")
	}
}

func TestWebSocketRefusesForeignOrigin(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) { testRefusesForeignOrigin(t, eng.engine) })
	}
}

func testRefusesForeignOrigin(t *testing.T, e web.Engine) {
	app := newApp(t, e)
	app.Get("/ws", wsweb.Handler(webtest.Echo))
	ctx, base := serveApp(t, app)
	header := http.Header{"Origin": {"http://evil.example"}}
	_, resp, err := websocket.Dial(ctx, wsURL(base, "/ws"), &websocket.DialOptions{HTTPHeader: header})
	if err == nil {
		t.Fatal("a cross-origin upgrade was accepted")
	}
	if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("got response %v; want 403", resp)
	}
	// A plain GET is not an upgrade.
	if rec := webtest.Do(t, app, "GET", "/ws", ""); rec.Code < 400 {
		t.Errorf("plain GET: got %d; want a client error", rec.Code)
	}
}

func TestWebSocketEndsOnShutdown(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) { testEndsOnShutdown(t, eng.engine) })
	}
}

func testEndsOnShutdown(t *testing.T, e web.Engine) {
	app := newApp(t, e)
	app.Get("/ws", wsweb.Handler(webtest.Echo))
	ctx, base := serveApp(t, app)
	c, _, err := websocket.Dial(ctx, wsURL(base, "/ws"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); err != nil {
		t.Fatal(err)
	}
	// The client keeps reading, as a browser does, so it answers the close.
	read := make(chan error, 1)
	go func() {
		_, _, err := c.Read(ctx)
		read <- err
	}()
	if err := app.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an open socket: %v", err)
	}
	err = <-read
	if got := websocket.CloseStatus(err); got != websocket.StatusGoingAway {
		t.Errorf("after shutdown: got close status %v (%v); want going away", got, err)
	}
}

func TestShutdownGivesUpOnAStuckWebSocket(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) { testGivesUpOnAStuckWebSocket(t, eng.engine) })
	}
}

func testGivesUpOnAStuckWebSocket(t *testing.T, e web.Engine) {
	app := newApp(t, e)
	release := make(chan struct{})
	started := make(chan struct{})
	app.Get("/ws", wsweb.Handler(func(ctx context.Context, c *websocket.Conn, r *http.Request) error {
		close(started)
		<-release // ignores ctx: Shutdown cannot end it
		return nil
	}))
	ctx, base := serveApp(t, app)
	c, _, err := websocket.Dial(ctx, wsURL(base, "/ws"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	<-started

	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	err = app.Shutdown(short)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "long-lived handlers still running") {
		t.Errorf("shutdown with a stuck socket: got %v; want long-lived handlers still running: context deadline exceeded", err)
	}
	close(release) // goleak (TestMain) checks that nothing Shutdown started outlives the handler
}

type userKey struct{}

// describeRequest is a WebSocket handler that sends one message saying what
// it learns from the upgrade request, then waits for the client to close.
func describeRequest(ctx context.Context, c *websocket.Conn, r *http.Request) error {
	user, _ := r.Context().Value(userKey{}).(string)
	session, _ := r.Cookie("session")
	// The handler's context carries the request's values.
	_, fromCtx := ctx.Value(userKey{}).(string)
	msg := fmt.Sprintf("room=%s name=%s client=%s user=%s session=%v ctx=%t",
		r.PathValue("room"), r.URL.Query().Get("name"), r.Header.Get("X-Client"), user, session, fromCtx == (user != ""))
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		return err
	}
	_, _, err := c.Read(ctx) // until the client closes
	return err
}

func TestWebSocketHandlerGetsTheRequest(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) { testHandlerGetsTheRequest(t, eng.engine) })
	}
}

func testHandlerGetsTheRequest(t *testing.T, e web.Engine) {
	// A decorator that adds to the request's context, as auth would.
	withUser := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, "ann")))
		})
	}
	app := newApp(t, e)
	app.Get("/rooms/{room}", wsweb.Handler(describeRequest), web.WithDecorators(withUser))
	app.Group("/plain").Get("/rooms/{room}", wsweb.Handler(describeRequest))
	ctx, appBase := serveApp(t, app)

	// The same handler outside an App, on a plain ServeMux.
	mux := http.NewServeMux()
	mux.Handle("GET /mux/rooms/{room}", wsweb.Handler(describeRequest))
	muxServer := httptest.NewServer(mux)
	t.Cleanup(muxServer.Close)

	tests := []struct {
		base   string
		target string
		want   string
	}{
		{appBase, "/rooms/go?name=bob", "room=go name=bob client=test user=ann session=session=s3cret ctx=true"},
		{appBase, "/plain/rooms/rust", "room=rust name= client=test user= session=session=s3cret ctx=true"},
		{muxServer.URL, "/mux/rooms/zig?name=cy", "room=zig name=cy client=test user= session=session=s3cret ctx=true"},
	}
	for _, tt := range tests {
		header := http.Header{"X-Client": {"test"}, "Cookie": {"session=s3cret"}}
		url := wsURL(tt.base, tt.target)
		c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: header})
		if err != nil {
			t.Fatalf("dial %s: %v", tt.target, err)
		}
		_, got, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read from %s: %v", tt.target, err)
		}
		if string(got) != tt.want {
			t.Errorf("%s: got %q; want %q", tt.target, got, tt.want)
		}
		c.Close(websocket.StatusNormalClosure, "")
	}
}

// TestWebSocketClientGone: a client that drops its connection without a
// close frame ends the handler's read at once, on both engines (nbio tells
// its own close handler only after the handler returns).
func TestWebSocketClientGone(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			ended := make(chan error, 1)
			app.Get("/ws", wsweb.Handler(func(ctx context.Context, c *websocket.Conn, r *http.Request) error {
				err := webtest.Echo(ctx, c, r)
				ended <- err
				return err
			}))
			ctx, base := serveApp(t, app)
			c, _, err := websocket.Dial(ctx, wsURL(base, "/ws"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Write(ctx, websocket.MessageText, []byte("ping")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Read(ctx); err != nil {
				t.Fatal(err)
			}
			c.CloseNow()
			select {
			case err := <-ended:
				if err == nil {
					t.Error("handler's read: got nil; want the error of a connection gone")
				}
			case <-ctx.Done():
				t.Fatal("the handler was still reading a minute after its client went")
			}
		})
	}
}

// TestWebSocketLargeMessages echoes messages larger than the socket buffers
// and than what nbio may queue before a write waits, both ways, on both
// engines.
func TestWebSocketLargeMessages(t *testing.T) {
	const size = 3 << 20
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			app.Get("/ws", wsweb.Handler(func(ctx context.Context, c *websocket.Conn, r *http.Request) error {
				c.SetReadLimit(size)
				return webtest.Echo(ctx, c, r)
			}))
			ctx, base := serveApp(t, app)
			c, _, err := websocket.Dial(ctx, wsURL(base, "/ws"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			c.SetReadLimit(size)
			msg := []byte(strings.Repeat("0123456789abcdef", size/16))
			for range 3 {
				if err := c.Write(ctx, websocket.MessageBinary, msg); err != nil {
					t.Fatal(err)
				}
				_, got, err := c.Read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(msg) {
					t.Fatalf("echo of %d bytes: got %d bytes back, not the same", len(msg), len(got))
				}
			}
			c.Close(websocket.StatusNormalClosure, "")
		})
	}
}

// TestWebSocketWriteTimeout: a handler pushing to a client that stopped
// reading gets a write error from the App's write timeout on both engines,
// instead of blocking (or, on nbio, queueing) for ever.
func TestWebSocketWriteTimeout(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine, web.WithWriteTimeout(200*time.Millisecond))
			ended := make(chan error, 1)
			app.Get("/push", wsweb.Handler(func(ctx context.Context, c *websocket.Conn, r *http.Request) error {
				msg := make([]byte, 256<<10)
				for range 4096 { // 1 GiB
					if err := c.Write(ctx, websocket.MessageBinary, msg); err != nil {
						ended <- err
						return err
					}
				}
				ended <- nil
				return nil
			}))
			ctx, base := serveApp(t, app)
			c, _, err := websocket.Dial(ctx, wsURL(base, "/push"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			// The client never reads.
			select {
			case err := <-ended:
				if err == nil {
					t.Error("the handler pushed 1 GiB to a client that does not read")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the handler was still pushing to a client that does not read after 30s")
			}
		})
	}
}
