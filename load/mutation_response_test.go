package load

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// TestParseResponseEdges takes each bound of the response parser exactly at
// its edge and one past: the status line's length, digits and version,
// the informational statuses, the longest Content-Length and chunk size,
// the hex digits of a chunk size, and the bytes a header name may hold.
func TestParseResponseEdges(t *testing.T) {
	ok := func(body string) string { return "Content-Length: " + string(rune('0'+len(body))) + "\r\n\r\n" + body }
	chunked := func(size, data string) string {
		return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + size + "\r\n" + data + "\r\n0\r\n\r\n"
	}
	for _, tc := range []struct {
		name   string
		in     string
		status int // 0: an error is wanted
		body   string
		close  bool
	}{
		{name: "status line of 12 bytes", in: "HTTP/1.1 200\r\n" + ok("x"), status: 200, body: "x"},
		{name: "status line of 11 bytes", in: "HTTP/1.1 20\r\n" + ok("x")},
		{name: "status of 4 digits", in: "HTTP/1.1 2000\r\n" + ok("x")},
		{name: "status 100 is the least", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n" + ok("x"), status: 200, body: "x"},
		{name: "status 099", in: "HTTP/1.1 099 X\r\n" + ok("x")},
		{name: "status 199 is informational", in: "HTTP/1.1 199 X\r\n\r\nHTTP/1.1 200 OK\r\n" + ok("x"), status: 200, body: "x"},
		{name: "status 101 is final", in: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", status: 101},
		{name: "status digits 0 and 9", in: "HTTP/1.1 209 X\r\n" + ok("x"), status: 209, body: "x"},
		{name: "status digit '/'", in: "HTTP/1.1 2/0 X\r\n" + ok("x")},
		{name: "status digit ':'", in: "HTTP/1.1 2:0 X\r\n" + ok("x")},
		{name: "version 1.9", in: "HTTP/1.9 200 OK\r\n" + ok("x"), status: 200, body: "x"},
		{name: "version 1./", in: "HTTP/1./ 200 OK\r\n" + ok("x")},
		{name: "version 1.:", in: "HTTP/1.: 200 OK\r\n" + ok("x")},
		{name: "HTTP/1.0 has no transfer codings", in: "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok", close: true},
		{name: "status 200 without length lasts to EOF", in: "HTTP/1.1 200 OK\r\n\r\nall", status: 200, body: "all", close: true},
		{name: "status 304 has no body", in: "HTTP/1.1 304 Not Modified\r\n\r\n", status: 304},
		{name: "content-length 0, then 2", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nContent-Length: 2\r\n\r\nok"},
		{name: "content-length 0 twice", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n", status: 200},
		{name: "content-length of 18 digits", in: "HTTP/1.1 200 OK\r\nContent-Length: " + strings.Repeat("0", 17) + "2\r\n\r\nok", status: 200, body: "ok"},
		{name: "content-length of 19 digits", in: "HTTP/1.1 200 OK\r\nContent-Length: " + strings.Repeat("0", 18) + "2\r\n\r\nok"},
		{name: "content-length digit '/'", in: "HTTP/1.1 200 OK\r\nContent-Length: 1/\r\n\r\nok"},
		{name: "content-length digit ':'", in: "HTTP/1.1 200 OK\r\nContent-Length: 1:\r\n\r\nok"},
		{name: "chunk size of 15 digits", in: chunked(strings.Repeat("0", 14)+"2", "ok"), status: 200, body: "ok"},
		{name: "chunk size of 16 digits", in: chunked(strings.Repeat("0", 15)+"2", "ok")},
		{name: "chunk size a", in: chunked("a", strings.Repeat("a", 10)), status: 200, body: strings.Repeat("a", 10)},
		{name: "chunk size f", in: chunked("f", strings.Repeat("f", 15)), status: 200, body: strings.Repeat("f", 15)},
		{name: "chunk size A", in: chunked("A", strings.Repeat("A", 10)), status: 200, body: strings.Repeat("A", 10)},
		{name: "chunk size F", in: chunked("F", strings.Repeat("F", 15)), status: 200, body: strings.Repeat("F", 15)},
		{name: "chunk size 9", in: chunked("9", strings.Repeat("9", 9)), status: 200, body: strings.Repeat("9", 9)},
		{name: "chunk size 10", in: chunked("10", strings.Repeat("x", 16)), status: 200, body: strings.Repeat("x", 16)},
		{name: "chunk size g", in: chunked("g", "x")},
		{name: "chunk size G", in: chunked("G", "x")},
		{name: "chunk size `", in: chunked("`", "x")},
		{name: "chunk size @", in: chunked("@", "x")},
		{name: "chunk size /", in: chunked("/", "x")},
		{name: "chunk size :", in: chunked(":", "x")},
		{name: "chunk size padded", in: chunked(" 2 ", "ok"), status: 200, body: "ok"},
		{name: "header name with ~ and !", in: "HTTP/1.1 200 OK\r\nX~!: y\r\n" + ok("x"), status: 200, body: "x"},
		{name: "header name with DEL", in: "HTTP/1.1 200 OK\r\nX\x7f: y\r\n" + ok("x")},
		{name: "header name with a space", in: "HTTP/1.1 200 OK\r\nX Y: z\r\n" + ok("x")},
		{name: "header name empty", in: "HTTP/1.1 200 OK\r\n: z\r\n" + ok("x")},
		{name: "connection close among others", in: "HTTP/1.1 200 OK\r\nConnection: upgrade,close\r\n" + ok("x"), status: 200, body: "x", close: true},
		{name: "transfer-encoding not last chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nrest", status: 200, body: "rest", close: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkParse(t, tc.in, false, tc.status == 0, tc.status, tc.body, tc.close)
		})
	}
}

// TestConsumeDiscardsABodyLongerThanTheBuffer reads, without keeping it, a
// body several buffers long: all of it is consumed, and what follows it is
// left for the next response.
func TestConsumeDiscardsABodyLongerThanTheBuffer(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 100)+"next"), 16)
	n, err := consume(br, 100, nil)
	if n != 100 || err != nil {
		t.Fatalf("consume = %d, %v; want 100, nil", n, err)
	}
	if rest, _ := io.ReadAll(br); string(rest) != "next" {
		t.Errorf("left %q after the body; want %q", rest, "next")
	}
}
