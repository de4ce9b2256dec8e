package wsapp

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/coder/websocket"
)

// writeTimeout bounds one write to a client: a client that does not read
// for this long is cut off rather than holding the handler.
const writeTimeout = 10 * time.Second

// echo sends every message back, text as text and binary as binary, until
// the connection ends.
func echo(ctx context.Context, conn *websocket.Conn) error {
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return ended(ctx, err)
		}
		if err := write(ctx, conn, typ, data); err != nil {
			return ended(ctx, err)
		}
	}
}

func write(ctx context.Context, conn *websocket.Conn, typ websocket.MessageType, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	return conn.Write(ctx, typ, data)
}

// ended turns the error that ended a connection into the handler's result:
// nil when the client closed it, with a close frame or without (EOF), sent
// a message over MaxMessageSize (the library has closed the connection with
// StatusMessageTooBig), when this side closed it, or when the server is
// shutting down, all of which are normal; the error otherwise, for web to
// log.
func ended(ctx context.Context, err error) error {
	switch {
	case websocket.CloseStatus(err) != -1, ctx.Err() != nil,
		errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, websocket.ErrMessageTooBig):
		return nil
	}
	return err
}
