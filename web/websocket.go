package web

import (
	"context"
	"net/http"

	"github.com/coder/websocket"
)

// WebSocketOptions configures a WebSocket endpoint. The zero value accepts
// only same-origin browsers (and clients that send no Origin header).
type WebSocketOptions struct {
	// OriginPatterns lists the other origins allowed to connect, as host
	// patterns matched with path.Match ("example.com", "*.example.com").
	// Cross-origin requests are refused with 403 unless listed here.
	OriginPatterns []string
	// Subprotocols lists the subprotocols the server speaks, in order of preference.
	Subprotocols []string
	// Compression enables per-message deflate when the client offers it.
	Compression bool
}

// A WebSocketHandler serves one WebSocket connection. Reads fail once the
// client goes; ctx ends when the server shuts down. When it returns, the
// connection is closed: with StatusNormalClosure if it returned nil or the
// peer had closed, StatusGoingAway on shutdown, StatusInternalError otherwise.
// WebSocketRequest(ctx) is the request that opened the connection, for its
// path parameters, query and headers.
type WebSocketHandler func(ctx context.Context, c *websocket.Conn) error

type upgradeRequestKey struct{}

// WebSocketRequest returns the HTTP request that opened the WebSocket whose
// handler was given ctx, or a context derived from it: its path parameters
// (r.PathValue), query, headers, cookies, RemoteAddr, TLS state, and the
// values decorators put in its context. For any other context it returns nil.
//
// The request is the one the route's decorators handed on, after the
// upgrade: its body is gone, and it must be read, not modified (it is shared
// by whatever goroutines the handler starts). Check what can make the
// request fail (a bad parameter, no session) in a decorator instead, before
// the upgrade, where it can still be answered with an HTTP status; once the
// handler runs, the only answer left is a close frame.
func WebSocketRequest(ctx context.Context) *http.Request {
	r, _ := ctx.Value(upgradeRequestKey{}).(*http.Request)
	return r
}

// WebSocket registers h at path for GET upgrade requests. Origins are
// checked by default; a refused upgrade gets 403, a request that is not an
// upgrade gets 426. App.Shutdown (and so Serve and Run) ends the
// connections and waits for their handlers.
//
// h holds its executor slot for the life of the connection, so WebSocket
// routes belong on the virtual executor or on one sized for connections.
func (g *Group) WebSocket(path string, h WebSocketHandler, opts WebSocketOptions, routeOpts ...RouteOption) {
	g.Handle(http.MethodGet, path, websocketHandler(g.app, h, opts), routeOpts...)
}

// WebSocket adapts h to a HandlerFunc for use outside an App (any mux).
// Without an App there is no shutdown signal: ctx is the request's.
func WebSocket(h WebSocketHandler, opts WebSocketOptions) HandlerFunc {
	return websocketHandler(nil, h, opts)
}

func websocketHandler(app *App, h WebSocketHandler, opts WebSocketOptions) HandlerFunc {
	accept := &websocket.AcceptOptions{
		OriginPatterns:  opts.OriginPatterns,
		Subprotocols:    opts.Subprotocols,
		CompressionMode: websocket.CompressionDisabled,
	}
	if opts.Compression {
		accept.CompressionMode = websocket.CompressionContextTakeover
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		if app != nil {
			if !app.openSocket() {
				return &Error{Status: http.StatusServiceUnavailable, Message: "server shutting down"}
			}
			defer app.closeSocket()
		}
		conn, err := websocket.Accept(w, r, accept)
		if err != nil {
			return nil // Accept has written the refusal
		}
		ctx, cancel := context.WithCancel(context.WithValue(r.Context(), upgradeRequestKey{}, r))
		defer cancel()
		if app != nil {
			// On shutdown, say goodbye with a close frame (Going Away), which
			// ends the handler's reads; then end its context.
			said := make(chan struct{})
			stop := context.AfterFunc(app.closingCtx, func() {
				defer close(said)
				_ = conn.Close(websocket.StatusGoingAway, "server shutting down")
				cancel()
			})
			defer func() {
				if !stop() {
					<-said
				}
			}()
		}
		err = h(ctx, conn)
		switch {
		case err == nil || websocket.CloseStatus(err) != -1 || ctx.Err() != nil:
			conn.Close(websocket.StatusNormalClosure, "")
		default:
			app.logError(r, "websocket handler error", err)
			conn.Close(websocket.StatusInternalError, "internal error")
		}
		return nil
	}
}
