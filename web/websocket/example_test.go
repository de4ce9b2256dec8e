package websocket_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/coder/websocket"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
	wsweb "github.com/loomrt/loom/web/websocket"
)

func ExampleHandler() {
	app := web.MustNew(web.WithExecutor(loom.Virtual()))
	defer app.Shutdown(context.Background())
	// Each message comes back prefixed with the room, a path parameter of
	// the request that opened the socket.
	app.Get("/rooms/{room}", wsweb.Handler(func(ctx context.Context, c *websocket.Conn, r *http.Request) error {
		for {
			typ, msg, err := c.Read(ctx)
			if err != nil {
				return err
			}
			if err := c.Write(ctx, typ, []byte(r.PathValue("room")+": "+string(msg))); err != nil {
				return err
			}
		}
	}))
	srv := httptest.NewServer(app)
	defer srv.Close()

	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/rooms/go", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.CloseNow()
	_ = c.Write(ctx, websocket.MessageText, []byte("hello"))
	_, msg, err := c.Read(ctx)
	fmt.Println(string(msg), err)
	c.Close(websocket.StatusNormalClosure, "")
	// Output: go: hello <nil>
}
