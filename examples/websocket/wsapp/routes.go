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
	wsweb "github.com/loomrt/loom/web/websocket"
)

//go:embed static
var static embed.FS

// MaxMessageSize is the largest message, in bytes, a client may send; a
// larger one closes its connection with StatusMessageTooBig.
const MaxMessageSize = 4096

// NewApp returns a web.App, configured by opts, with the routes of
// Register. The caller keeps hub and closes it after the App has shut down.
func NewApp(hub *Hub, origins []string, opts ...web.AppOption) (*web.App, error) {
	app, err := web.New(opts...)
	if err != nil {
		return nil, err
	}
	if err := Register(app, hub, origins...); err != nil {
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
// origins are the other origins allowed to connect (host patterns, as
// websocket.Origins reads them); same-origin pages always may, and any other
// Origin gets 403. A bad mode or name is a 400
// before the upgrade; a plain GET without an upgrade is a 426.
//
// A WebSocket holds its executor slot for as long as it is open, so /ws
// runs on an executor of its own, "websocket": LOOM_EXECUTOR_WEBSOCKET if
// set, else virtual. LOOM_EXECUTOR switches the other routes without
// capping the number of open sockets. Register returns app.Err: it fails on
// a bad LOOM_EXECUTOR_WEBSOCKET.
func Register(app *web.App, hub *Hub, origins ...string) error {
	s := &server{hub: hub}
	app.Get("/ws", wsweb.Handler(s.serve, wsweb.WithOrigins(origins...)),
		web.WithExecutorFromEnv("websocket", "virtual"), web.WithDecorators(s.parseQuery))

	assets, err := fs.Sub(static, "static")
	if err != nil {
		panic("wsapp: embedded assets: " + err.Error()) // the embed directive guarantees it exists
	}
	app.Get("/{$}", func(w http.ResponseWriter, r *http.Request) error {
		http.ServeFileFS(w, r, assets, "index.html")
		return nil
	})
	return app.Err()
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
// get a plain 400 (once the socket is open, only a close frame is left),
// and hands what it parsed to serve in the request's context.
func (s *server) parseQuery(next http.Handler) http.Handler {
	return web.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		var set settings
		switch mode := web.Query(r, "mode").String(); mode {
		case "echo":
			set.echo = true
		case "", "chat":
			name, err := ParseName(web.Query(r, "name").String())
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
func (s *server) serve(ctx context.Context, conn *websocket.Conn, r *http.Request) error {
	conn.SetReadLimit(MaxMessageSize)
	set, _ := r.Context().Value(settingsKey{}).(settings)
	if set.echo {
		return echo(ctx, conn)
	}
	return s.chat(ctx, conn, set.name)
}
