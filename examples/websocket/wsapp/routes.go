package wsapp

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"sync/atomic"

	"github.com/coder/websocket"
	"github.com/loomrt/loom/web"
)

//go:embed static
var static embed.FS

// MaxMessageSize is the largest message, in bytes, a client may send; a
// larger one closes its connection with StatusMessageTooBig.
const MaxMessageSize = 4096

// NewApp returns a web.App, configured by opts, with the routes of
// Register. The caller keeps hub and closes it after the App has shut down.
func NewApp(hub *Hub, ws web.WebSocketOptions, opts ...web.Option) (*web.App, error) {
	app, err := web.New(opts...)
	if err != nil {
		return nil, err
	}
	if err := Register(app, hub, ws); err != nil {
		// Shut down the executors web.New made; nothing is running on them.
		return nil, errors.Join(err, app.Shutdown(context.Background()))
	}
	return app, nil
}

// Register mounts on app:
//
//	GET /ws?mode=echo             a WebSocket that sends every message back
//	GET /ws[?mode=chat][&name=…]  a WebSocket in hub's chat room (Event messages)
//	GET /                         the page that uses them
//
// ws sets the allowed origins; by default only same-origin pages may
// connect, and any other Origin gets 403. A bad mode or name is a 400
// before the upgrade; a plain GET without an upgrade is a 426.
//
// A WebSocket holds its executor slot for as long as it is open, so /ws
// runs on an executor of its own, "websocket": LOOM_EXECUTOR_WEBSOCKET if
// set, else virtual. LOOM_EXECUTOR switches the other routes without
// capping the number of open sockets. Register fails only on a bad
// LOOM_EXECUTOR_WEBSOCKET.
func Register(app *web.App, hub *Hub, ws web.WebSocketOptions) error {
	sockets, err := app.NewExecutor("websocket", "virtual")
	if err != nil {
		return err
	}
	s := &server{hub: hub}
	app.WebSocket("/ws", s.serve, ws, web.Executor(sockets), web.Use(s.parseQuery))

	assets, err := fs.Sub(static, "static")
	if err != nil {
		panic("wsapp: embedded assets: " + err.Error()) // the embed directive guarantees it exists
	}
	app.Get("/{$}", func(w http.ResponseWriter, r *http.Request) error {
		http.ServeFileFS(w, r, assets, "index.html")
		return nil
	})
	return nil
}

type server struct {
	hub    *Hub
	guests atomic.Int64 // numbers guest names
}

// settings are what the query of a /ws request asks for.
type settings struct {
	echo bool
	name string
}

type settingsKey struct{}

// parseQuery checks ?mode= and ?name= before the upgrade, so that bad ones
// get a plain 400, and hands them to serve in the request's context: a
// web.WebSocketHandler sees the context but not the request.
func (s *server) parseQuery(next http.Handler) http.Handler {
	return web.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		var set settings
		switch mode := web.Query(r, "mode"); mode {
		case "echo":
			set.echo = true
		case "", "chat":
			name, err := ParseName(web.Query(r, "name"))
			if err != nil {
				return web.Errorf(http.StatusBadRequest, "query parameter %q: %v", "name", err)
			}
			if name == "" {
				name = fmt.Sprintf("guest-%d", s.guests.Add(1))
			}
			set.name = name
		default:
			return web.Errorf(http.StatusBadRequest, "query parameter %q: %q is not echo or chat", "mode", mode)
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), settingsKey{}, set)))
		return nil
	})
}

// serve runs one WebSocket until the client or the server ends it. On
// shutdown web closes the connection with StatusGoingAway, which ends the
// reads below, before it cancels ctx.
func (s *server) serve(ctx context.Context, conn *websocket.Conn) error {
	conn.SetReadLimit(MaxMessageSize)
	set, _ := ctx.Value(settingsKey{}).(settings)
	if set.echo {
		return echo(ctx, conn)
	}
	return s.chat(ctx, conn, set.name)
}
