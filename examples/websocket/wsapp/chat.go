package wsapp

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// chat joins the connection to the hub's room: its text messages are
// published, the room's events are written to it. A reader goroutine, owned
// and waited for here, feeds the hub while this goroutine writes.
func (s *server) chat(ctx context.Context, conn *websocket.Conn, name string) error {
	m, err := s.hub.Join(ctx, name)
	if err != nil {
		conn.Close(websocket.StatusGoingAway, "chat closed")
		return nil
	}
	defer s.hub.Leave(m)

	readErr := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() { readErr <- s.publishAll(ctx, conn, m) })
	// Closing the connection ends the reader's Read; every way out closes it.
	defer wg.Wait()

	for {
		select {
		case data, ok := <-m.Events():
			if !ok {
				if m.Dropped() {
					conn.Close(websocket.StatusTryAgainLater, "too slow: events were piling up")
				} else {
					conn.Close(websocket.StatusGoingAway, "chat closed")
				}
				return nil
			}
			if err := write(ctx, conn, websocket.MessageText, data); err != nil {
				conn.CloseNow()
				return ended(ctx, err)
			}
		case err := <-readErr:
			if errors.Is(err, ErrHubClosed) {
				conn.Close(websocket.StatusGoingAway, "chat closed")
				return nil
			}
			conn.CloseNow() // the reader has seen the close or an error already
			return ended(ctx, err)
		}
	}
}

// publishAll reads the member's messages and publishes each, trimmed; blank
// ones are ignored. It returns when the connection ends or a binary message
// arrives, which the chat does not accept, or the hub closes.
func (s *server) publishAll(ctx context.Context, conn *websocket.Conn, m *Member) error {
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return err
		}
		if typ != websocket.MessageText {
			conn.Close(websocket.StatusUnsupportedData, "chat messages must be text")
			return nil
		}
		text := strings.TrimSpace(string(data))
		if text == "" {
			continue
		}
		if err := s.hub.Publish(ctx, m, text); err != nil {
			return err // ErrHubClosed, or ctx ended on shutdown
		}
	}
}
