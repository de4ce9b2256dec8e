package wsapp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/coder/websocket"
	"github.com/loomrt/loom/examples/websocket/wsapp"
)

func ExampleNewApp() {
	ctx := context.Background()
	hub := wsapp.NewHub(0)
	defer hub.Close()
	app, err := wsapp.NewApp(hub, nil)
	if err != nil {
		panic(err)
	}
	defer app.Shutdown(ctx)
	srv := httptest.NewServer(app)
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")

	// Echo: what goes out comes back.
	conn, _, err := websocket.Dial(ctx, url+"/ws?mode=echo", nil)
	if err != nil {
		panic(err)
	}
	conn.Write(ctx, websocket.MessageText, []byte("hello"))
	_, msg, err := conn.Read(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(msg))
	conn.Close(websocket.StatusNormalClosure, "")

	// Chat: events are JSON; a member sees its own join and messages.
	conn, _, err = websocket.Dial(ctx, url+"/ws?name=ada", nil)
	if err != nil {
		panic(err)
	}
	_, msg, _ = conn.Read(ctx)
	fmt.Println(string(msg))
	conn.Write(ctx, websocket.MessageText, []byte("hi all"))
	_, msg, _ = conn.Read(ctx)
	fmt.Println(string(msg))
	conn.Close(websocket.StatusNormalClosure, "")
	// Output:
	// hello
	// {"kind":"joined","from":"ada","online":1}
	// {"kind":"message","from":"ada","text":"hi all"}
}
