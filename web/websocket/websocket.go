// Package websocket serves WebSocket endpoints on a web.App, with
// github.com/coder/websocket connections. It is a package of its own so
// that only programs that serve WebSockets link the WebSocket library.
//
//	app.Get("/echo", websocket.Handler(func(ctx context.Context, c *websocket.Conn, r *http.Request) error {
//		for {
//			typ, msg, err := c.Read(ctx)
//			if err != nil {
//				return err
//			}
//			if err := c.Write(ctx, typ, msg); err != nil {
//				return err
//			}
//		}
//	}))
//
// (Conn, Read and Write are github.com/coder/websocket's; import it under
// another name next to this package.)
//
// It works on both connection engines: on web/nbio the upgrade takes the
// connection through the engine's Hijack (docs/web.md, "choosing an
// engine").
package websocket

import (
	"context"
	"fmt"
	"net/http"

	"github.com/coder/websocket"

	"github.com/loomrt/loom/web"
)

// A Func serves one WebSocket connection. r is the request that opened it:
// its path parameters (r.PathValue), query, headers, cookies, and the values
// decorators put in its context. Its body is gone; read r, do not modify it
// (it is shared by whatever goroutines the handler starts). Check what can
// make the request fail (a bad parameter, no session) in a decorator
// instead, before the upgrade, where it can still be answered with an HTTP
// status; once the handler runs, the only answer left is a close frame.
//
// Reads fail once the client goes; ctx ends when the App shuts down. When it
// returns, the connection is closed: with StatusNormalClosure if it returned
// nil or the peer had closed, StatusGoingAway on shutdown,
// StatusInternalError otherwise (and the error is logged by the App).
type Func func(ctx context.Context, c *websocket.Conn, r *http.Request) error

// An Option configures a WebSocket endpoint. Without options it accepts
// only same-origin browsers (and clients that send no Origin header), no
// subprotocol, and no compression.
type Option func(*websocket.AcceptOptions)

// WithOrigins lists the other origins allowed to connect, as host patterns
// matched with path.Match ("example.com", "*.example.com"). Cross-origin
// requests are refused with 403 unless listed.
func WithOrigins(patterns ...string) Option {
	return func(o *websocket.AcceptOptions) { o.OriginPatterns = append(o.OriginPatterns, patterns...) }
}

// WithSubprotocols lists the subprotocols the server speaks, in order of
// preference.
func WithSubprotocols(names ...string) Option {
	return func(o *websocket.AcceptOptions) { o.Subprotocols = append(o.Subprotocols, names...) }
}

// WithCompression enables per-message deflate when the client offers it.
func WithCompression() Option {
	return func(o *websocket.AcceptOptions) { o.CompressionMode = websocket.CompressionContextTakeover }
}

// Handler adapts h to a web.HandlerFunc for a GET route: it upgrades the
// request and runs h. A refused origin gets 403, a request that is not an
// upgrade 426, an App shutting down 503. Under an App, App.Shutdown (and so
// Serve and Run) closes the connection with StatusGoingAway, ends ctx and
// waits for h (see web.Hold); elsewhere ctx is the request's.
//
// h holds its executor slot for the life of the connection, so WebSocket
// routes belong on the virtual executor or on one sized for connections.
func Handler(h Func, opts ...Option) web.HandlerFunc {
	accept := &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled}
	for _, opt := range opts {
		opt(accept)
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		stop, release, err := web.Hold(w)
		if err != nil {
			return err
		}
		defer release()
		conn, err := websocket.Accept(w, r, accept)
		if err != nil {
			return nil // Accept has written the refusal
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		// On shutdown, say goodbye with a close frame (Going Away), which
		// ends the handler's reads; then end its context.
		said := make(chan struct{})
		unhook := context.AfterFunc(stop, func() {
			defer close(said)
			_ = conn.Close(websocket.StatusGoingAway, "server shutting down")
			cancel()
		})
		defer func() {
			if !unhook() {
				<-said
			}
		}()
		err = h(ctx, conn, r)
		if err == nil || websocket.CloseStatus(err) != -1 || ctx.Err() != nil {
			conn.Close(websocket.StatusNormalClosure, "")
			return nil
		}
		conn.Close(websocket.StatusInternalError, "internal error")
		return fmt.Errorf("websocket handler: %w", err)
	}
}
