package wsapp

import (
	"bytes"
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
		_, got, err := conn.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Equal(got, msg) {
			b.Fatalf("echo %q; want %q", got, msg)
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
		for i, conn := range conns {
			_, got, err := conn.Read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if !bytes.Contains(got, msg) {
				b.Fatalf("member %d heard %q; want the message %q", i, got, msg)
			}
		}
	}
}
