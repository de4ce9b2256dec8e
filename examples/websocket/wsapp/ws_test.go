package wsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/loomrt/loom/web"
)

// testServer is the App on a real loopback server, with its hub.
type testServer struct {
	url string // ws://127.0.0.1:port
	hub *Hub
	app *web.App
	srv *httptest.Server
}

// start serves a new App and hub; both, and the server, are shut down when
// the test ends (earlier if the test calls shutdown).
func start(t testing.TB, origins []string) *testServer {
	t.Helper()
	hub := NewHub(0)
	app, err := NewApp(hub, origins)
	if err != nil {
		hub.Close()
		t.Fatalf("NewApp: %v", err)
	}
	srv := httptest.NewServer(app)
	ts := &testServer{url: "ws" + strings.TrimPrefix(srv.URL, "http"), hub: hub, app: app, srv: srv}
	t.Cleanup(func() { ts.shutdown(t) })
	return ts
}

// shutdown does what web.App.Serve does on the way out, then closes the hub.
func (ts *testServer) shutdown(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.app.Shutdown(ctx); err != nil {
		t.Errorf("App.Shutdown: %v", err)
	}
	ts.srv.Close()
	if err := ts.hub.Close(); err != nil {
		t.Errorf("Hub.Close: %v", err)
	}
}

// dial connects to path and closes the connection when the test ends.
func dial(t testing.TB, url string, header http.Header) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	if resp.Body != nil {
		resp.Body.Close()
	}
	t.Cleanup(func() { conn.CloseNow() })
	return conn
}

// readEvent reads one chat Event, failing the test after 10 s.
func readEvent(t testing.TB, conn *websocket.Conn) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	typ, data, err := conn.Read(ctx)
	if err != nil {
		t.Fatalf("read event: %v", err)
	}
	if typ != websocket.MessageText {
		t.Fatalf("got a %v message; want text", typ)
	}
	var e Event
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("event %q: %v", data, err)
	}
	return e
}

func send(t testing.TB, conn *websocket.Conn, typ websocket.MessageType, data string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := conn.Write(ctx, typ, []byte(data)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func TestEcho(t *testing.T) {
	ts := start(t, nil)
	conn := dial(t, ts.url+"/ws?mode=echo", nil)
	tests := []struct {
		typ  websocket.MessageType
		data string
	}{
		{websocket.MessageText, "hello"},
		{websocket.MessageText, "héllo, wörld ✓"},
		{websocket.MessageBinary, "\x00\x01\x02\xff"},
		{websocket.MessageText, strings.Repeat("x", MaxMessageSize)},
		{websocket.MessageText, ""},
	}
	for _, tt := range tests {
		send(t, conn, tt.typ, tt.data)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		typ, got, err := conn.Read(ctx)
		cancel()
		if err != nil {
			t.Fatalf("read echo of %.20q: %v", tt.data, err)
		}
		if typ != tt.typ || string(got) != tt.data {
			t.Errorf("echo: got %v %.20q; want %v %.20q", typ, got, tt.typ, tt.data)
		}
	}
	if err := conn.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Errorf("client close: %v", err)
	}
}

func TestEchoMessageTooBig(t *testing.T) {
	ts := start(t, nil)
	conn := dial(t, ts.url+"/ws?mode=echo", nil)
	send(t, conn, websocket.MessageText, strings.Repeat("x", MaxMessageSize+1))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, _, err := conn.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Errorf("after an oversize message got close status %v (%v); want %v", got, err, websocket.StatusMessageTooBig)
	}
}

func TestChatBroadcast(t *testing.T) {
	ts := start(t, nil)

	ada := dial(t, ts.url+"/ws?name=ada", nil)
	// Each client's own "joined" event proves the hub has it, so the
	// broadcasts below cannot race with the joins.
	if got, want := readEvent(t, ada), (Event{Kind: KindJoined, From: "ada", Online: 1}); got != want {
		t.Fatalf("ada: got %+v; want %+v", got, want)
	}
	bob := dial(t, ts.url+"/ws?mode=chat&name=%20bob%20", nil)
	joined := Event{Kind: KindJoined, From: "bob", Online: 2}
	for name, conn := range map[string]*websocket.Conn{"ada": ada, "bob": bob} {
		if got := readEvent(t, conn); got != joined {
			t.Fatalf("%s: got %+v; want %+v", name, got, joined)
		}
	}

	// Messages from one connection after another, each read by both.
	steps := []struct {
		from *websocket.Conn
		text string
		want Event
	}{
		{ada, "  hello, bob  ", Event{Kind: KindMessage, From: "ada", Text: "hello, bob"}},
		{ada, "   ", Event{}}, // blank: ignored, so nothing to read
		{bob, "hi ada", Event{Kind: KindMessage, From: "bob", Text: "hi ada"}},
	}
	for _, step := range steps {
		send(t, step.from, websocket.MessageText, step.text)
		if step.want == (Event{}) {
			continue
		}
		for name, conn := range map[string]*websocket.Conn{"ada": ada, "bob": bob} {
			if got := readEvent(t, conn); got != step.want {
				t.Errorf("%s: got %+v; want %+v", name, got, step.want)
			}
		}
	}

	// Messages sent at once from both: each client gets all of them, and
	// both in the same order.
	const each = 20
	var senders sync.WaitGroup
	defer senders.Wait()
	for _, conn := range []*websocket.Conn{ada, bob} {
		senders.Go(func() {
			for i := range each {
				// Errors show up below as missing messages.
				_ = conn.Write(t.Context(), websocket.MessageText, []byte(fmt.Sprint(i)))
			}
		})
	}
	var seen [2][]string
	for i, conn := range []*websocket.Conn{ada, bob} {
		for range 2 * each {
			e := readEvent(t, conn)
			seen[i] = append(seen[i], e.From+":"+e.Text)
		}
	}
	if !slices.Equal(seen[0], seen[1]) {
		t.Errorf("ada and bob saw different orders:\n%v\n%v", seen[0], seen[1])
	}
	for _, name := range []string{"ada", "bob"} {
		for i := range each {
			if !slices.Contains(seen[0], fmt.Sprintf("%s:%d", name, i)) {
				t.Errorf("message %d from %s was not delivered", i, name)
			}
		}
	}

	if err := bob.Close(websocket.StatusNormalClosure, "bye"); err != nil {
		t.Errorf("bob close: %v", err)
	}
	if got, want := readEvent(t, ada), (Event{Kind: KindLeft, From: "bob", Online: 1}); got != want {
		t.Errorf("ada after bob left: got %+v; want %+v", got, want)
	}
}

func TestChatGuestNames(t *testing.T) {
	ts := start(t, nil)
	first := readEvent(t, dial(t, ts.url+"/ws", nil))
	second := readEvent(t, dial(t, ts.url+"/ws?name=", nil))
	if first.From != "guest-1" || second.From != "guest-2" {
		t.Errorf("got names %q and %q; want guest-1 and guest-2", first.From, second.From)
	}
}

func TestChatRefusesBinary(t *testing.T) {
	ts := start(t, nil)
	conn := dial(t, ts.url+"/ws?name=ada", nil)
	readEvent(t, conn) // joined
	send(t, conn, websocket.MessageBinary, "\x00")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, _, err := conn.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusUnsupportedData {
		t.Errorf("after a binary message got close status %v (%v); want %v", got, err, websocket.StatusUnsupportedData)
	}
}

// TestRefusedUpgrades covers requests that must not become WebSockets.
func TestRefusedUpgrades(t *testing.T) {
	ts := start(t, []string{"trusted.example"})
	tests := []struct {
		name       string
		path       string
		origin     string
		wantStatus int
		wantBody   string
	}{
		{"bad origin", "/ws?mode=echo", "http://evil.example", http.StatusForbidden, ""},
		{"bad origin chat", "/ws", "https://evil.example", http.StatusForbidden, ""},
		{"origin lookalike", "/ws", "http://trusted.example.evil.example", http.StatusForbidden, ""},
		{"bad mode", "/ws?mode=shout", "", http.StatusBadRequest, `query parameter "mode": "shout" is not echo or chat`},
		{"name too long", "/ws?name=" + strings.Repeat("n", MaxNameLength+1), "", http.StatusBadRequest,
			`query parameter "name": bad name: 33 characters, want at most 32`},
		{"name with control character", "/ws?name=a%07b", "", http.StatusBadRequest,
			`query parameter "name": bad name: character U+0007 is not printable`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := http.Header{}
			if tt.origin != "" {
				header.Set("Origin", tt.origin)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			conn, resp, err := websocket.Dial(ctx, ts.url+tt.path, &websocket.DialOptions{HTTPHeader: header})
			if err == nil {
				conn.CloseNow()
				t.Fatalf("dial %s: got a connection; want status %d", tt.path, tt.wantStatus)
			}
			if resp == nil {
				t.Fatalf("dial %s: got no response (%v); want status %d", tt.path, err, tt.wantStatus)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("dial %s: got status %d; want %d", tt.path, resp.StatusCode, tt.wantStatus)
			}
			if resp.Body != nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(body), tt.wantBody) {
					t.Errorf("dial %s: got body %q; want it to contain %q", tt.path, body, tt.wantBody)
				}
			}
		})
	}

	// A listed origin is let in.
	conn := dial(t, ts.url+"/ws?mode=echo", http.Header{"Origin": {"https://trusted.example"}})
	conn.Close(websocket.StatusNormalClosure, "")
}

func TestNotAnUpgrade(t *testing.T) {
	ts := start(t, nil)
	resp, err := http.Get(ts.srv.URL + "/ws?mode=echo")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("plain GET /ws: got status %d; want %d", resp.StatusCode, http.StatusUpgradeRequired)
	}
}

// TestShutdownClosesSockets checks that shutting the App down ends open
// sockets of both kinds with "going away", and that the hub then stops.
func TestShutdownClosesSockets(t *testing.T) {
	ts := start(t, nil)
	chat := dial(t, ts.url+"/ws?name=ada", nil)
	readEvent(t, chat) // joined: the handler is running
	echo := dial(t, ts.url+"/ws?mode=echo", nil)
	send(t, echo, websocket.MessageText, "ping")
	if _, _, err := echo.Read(t.Context()); err != nil {
		t.Fatalf("echo: %v", err)
	}

	closed := make(chan error, 2)
	for _, conn := range []*websocket.Conn{chat, echo} {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _, err := conn.Read(ctx)
			closed <- err
		}()
	}
	ts.shutdown(t)
	for range 2 {
		if err := <-closed; websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Errorf("after shutdown got %v; want close status %v", err, websocket.StatusGoingAway)
		}
	}
}

// TestHubCloseEndsChats checks that closing the hub while the App still
// runs ends its chat sockets with "going away".
func TestHubCloseEndsChats(t *testing.T) {
	ts := start(t, nil)
	conn := dial(t, ts.url+"/ws?name=ada", nil)
	readEvent(t, conn)
	if err := ts.hub.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, _, err := conn.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusGoingAway {
		t.Errorf("after Hub.Close got %v; want close status %v", err, websocket.StatusGoingAway)
	}
	// A new chat is refused the same way.
	late := dial(t, ts.url+"/ws?name=bob", nil)
	_, _, err = late.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusGoingAway {
		t.Errorf("chat after Hub.Close: got %v; want close status %v", err, websocket.StatusGoingAway)
	}
}

func TestPage(t *testing.T) {
	ts := start(t, nil)
	resp, err := http.Get(ts.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET /: got status %d; want 200", resp.StatusCode)
	}
	if got := resp.Header.Get("Content-Type"); got != "text/html; charset=utf-8" {
		t.Errorf("GET /: got Content-Type %q; want text/html; charset=utf-8", got)
	}
	for _, want := range []string{"<title>loom chat</title>", `new URL("/ws", location.href)`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("GET /: body does not contain %q", want)
		}
	}
	if strings.Contains(string(body), "http://") || strings.Contains(string(body), "https://") {
		t.Error("GET /: the page refers to an external URL")
	}
}

// TestSocketExecutor checks that sockets run on their own executor:
// LOOM_EXECUTOR does not cap them, LOOM_EXECUTOR_WEBSOCKET does.
func TestSocketExecutor(t *testing.T) {
	t.Run("LOOM_EXECUTOR leaves sockets alone", func(t *testing.T) {
		t.Setenv("LOOM_EXECUTOR", "limit:1,queue=0")
		ts := start(t, nil)
		for i := range 3 {
			conn := dial(t, ts.url+"/ws?mode=echo", nil)
			send(t, conn, websocket.MessageText, "ping")
			if _, msg, err := conn.Read(t.Context()); err != nil || string(msg) != "ping" {
				t.Fatalf("socket %d: got %q, %v; want ping", i, msg, err)
			}
		}
	})
	t.Run("LOOM_EXECUTOR_WEBSOCKET caps them", func(t *testing.T) {
		t.Setenv("LOOM_EXECUTOR_WEBSOCKET", "limit:1,queue=0")
		ts := start(t, nil)
		first := dial(t, ts.url+"/ws?mode=echo", nil)
		send(t, first, websocket.MessageText, "ping")
		if _, _, err := first.Read(t.Context()); err != nil {
			t.Fatalf("first socket: %v", err)
		}
		_, resp, err := websocket.Dial(t.Context(), ts.url+"/ws?mode=echo", nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("second socket over a limit of 1: got %v; want 503", err)
		}
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
	})
	t.Run("bad spec", func(t *testing.T) {
		t.Setenv("LOOM_EXECUTOR_WEBSOCKET", "limit:many")
		hub := NewHub(0)
		defer hub.Close()
		if _, err := NewApp(hub, nil); err == nil || !strings.Contains(err.Error(), "LOOM_EXECUTOR_WEBSOCKET") {
			t.Errorf("NewApp with a bad LOOM_EXECUTOR_WEBSOCKET: got %v; want an error naming it", err)
		}
	})
}
