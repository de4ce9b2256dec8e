package web

import "testing"

// TestFramingScan feeds streams to a connection's scan whole and a byte at
// a time and wants the same notes: a header section with both
// Content-Length and Transfer-Encoding, and a Transfer-Encoding line.
func TestFramingScan(t *testing.T) {
	tests := []struct {
		name, stream     string
		wantBoth, wantTE bool
	}{
		{"neither", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", false, false},
		{"a length", "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", false, false},
		{"chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false, true},
		{"both", "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", true, true},
		{"both, the other way round, any case", "POST / HTTP/1.1\r\ntransfer-ENCODING: chunked\r\nHost: a\r\ncOnTeNt-LeNgTh: 3\r\n\r\n", true, true},
		{"both with bare LFs", "POST / HTTP/1.1\nContent-Length: 3\nTransfer-Encoding: chunked\n\n", true, true},
		{"in two requests", "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcPOST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false, true},
		{"in two requests with bare LFs", "POST / HTTP/1.1\nContent-Length: 0\n\nPOST / HTTP/1.1\nTransfer-Encoding: chunked\n\n", false, true},
		{"not at a line's start", "GET / HTTP/1.1\r\nX-Content-Length: 3\r\nX: Transfer-Encoding: chunked\r\n\r\n", false, false},
		{"a name that only begins the same", "GET / HTTP/1.1\r\nContent-Lengths: 3\r\nTransfer-Encodings: chunked\r\n\r\n", false, false},
		{"a CR that is not a line end", "GET / HTTP/1.1\r\nContent-Length: 3\r\n\rX\r\nTransfer-Encoding: chunked\r\n\r\n", true, true},
	}
	for _, tt := range tests {
		whole := &framingConn{}
		whole.scan([]byte(tt.stream))
		bytewise := &framingConn{}
		for i := range len(tt.stream) {
			bytewise.scan([]byte(tt.stream[i : i+1]))
		}
		for _, c := range []*framingConn{whole, bytewise} {
			if got, gotTE := c.sawBoth.Load(), c.sawCoding.Load(); got != tt.wantBoth || gotTE != tt.wantTE {
				t.Errorf("%s: got both %v, Transfer-Encoding %v; want %v, %v", tt.name, got, gotTE, tt.wantBoth, tt.wantTE)
			}
		}
	}
}

// FuzzFramingScan wants the notes of a stream split in three to be those
// of the stream whole: they must not depend on how the bytes arrive.
func FuzzFramingScan(f *testing.F) {
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"), uint16(20), uint16(40))
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcPOST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), uint16(37), uint16(39))
	f.Fuzz(func(t *testing.T, stream []byte, i, j uint16) {
		a, b := min(int(i), len(stream)), min(int(j), len(stream))
		if a > b {
			a, b = b, a
		}
		whole, split := &framingConn{}, &framingConn{}
		whole.scan(stream)
		split.scan(stream[:a])
		split.scan(stream[a:b])
		split.scan(stream[b:])
		if whole.sawBoth.Load() != split.sawBoth.Load() || whole.sawCoding.Load() != split.sawCoding.Load() {
			t.Fatalf("%q split at %d, %d: both %v, TE %v; whole: %v, %v", stream, a, b,
				split.sawBoth.Load(), split.sawCoding.Load(), whole.sawBoth.Load(), whole.sawCoding.Load())
		}
	})
}
