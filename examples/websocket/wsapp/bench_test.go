package wsapp

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// BenchmarkEchoRoundTrip measures one message out and back over a real
// loopback socket.
func BenchmarkEchoRoundTrip(b *testing.B) {
	ts := start(b, nil)
	conn := dial(b, ts.url+"/ws?mode=echo", nil)
	msg := []byte("hello, loom")
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		if _, _, err := conn.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChatBroadcast measures one message from one member reaching all
// of a room of 10 over real sockets.
func BenchmarkChatBroadcast(b *testing.B) {
	const members = 10
	ts := start(b, nil)
	conns := make([]*websocket.Conn, members)
	for i := range conns {
		conns[i] = dial(b, ts.url+"/ws", nil)
		// Everyone so far, the newcomer included, hears of the join; reading
		// it leaves every queue empty.
		for _, conn := range conns[:i+1] {
			readEvent(b, conn)
		}
	}
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	msg := []byte("hello, room")
	b.ReportAllocs()
	for b.Loop() {
		if err := conns[0].Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		for _, conn := range conns {
			if _, _, err := conn.Read(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}
