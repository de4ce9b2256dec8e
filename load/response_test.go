package load

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// parse reads one response from s with the generator's parser.
func parse(s string, head bool) (h responseHead, body string, n int64, err error) {
	br := bufio.NewReaderSize(strings.NewReader(s), 64)
	n, err = readHead(br, &h)
	if err != nil {
		return h, "", n, err
	}
	var keep []byte
	m, err := readBody(br, &h, head, &keep)
	return h, string(keep), n + m, err
}

func TestParseResponse(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        string
		head      bool
		status    int
		body      string
		close     bool
		wantError bool
	}{
		{name: "content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", status: 200, body: "hello"},
		{name: "no reason", in: "HTTP/1.1 404\r\ncontent-length: 0\r\n\r\n", status: 404},
		{name: "bare LF", in: "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", status: 200, body: "ok"},
		{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\n", status: 200, body: "hello, world"},
		{name: "chunked beats length", in: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", status: 200, body: "ok", close: false},
		{name: "chunk longer than buffer", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nC8\r\n" + strings.Repeat("y", 200) + "\r\n0\r\n\r\n", status: 200, body: strings.Repeat("y", 200)},
		{name: "to EOF", in: "HTTP/1.1 200 OK\r\n\r\nuntil close", status: 200, body: "until close", close: true},
		{name: "HTTP/1.0 closes", in: "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x", close: true},
		{name: "HTTP/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x"},
		{name: "connection close", in: "HTTP/1.1 200 OK\r\nConnection: Keep-Alive, Close\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x", close: true},
		{name: "204 has no body", in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
		{name: "HEAD has no body", in: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", head: true, status: 200},
		{name: "1xx skipped", in: "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok"},
		{name: "same length twice", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok"},
		{name: "two lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", wantError: true},
		{name: "bad length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", wantError: true},
		{name: "bad status line", in: "HTTP/2 200 OK\r\n\r\n", wantError: true},
		{name: "status with letters", in: "HTTP/1.1 2x0 OK\r\n\r\n", wantError: true},
		{name: "header without colon", in: "HTTP/1.1 200 OK\r\nnonsense\r\n\r\n", wantError: true},
		{name: "folded header", in: "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", wantError: true},
		{name: "short body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", wantError: true},
		{name: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", wantError: true},
		{name: "chunk without CRLF", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n0\r\n\r\n", wantError: true},
		{name: "long header skipped", in: "HTTP/1.1 200 OK\r\nSet-Cookie: " + strings.Repeat("a", 200) + "\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok"},
		{name: "long trailer skipped", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX: " + strings.Repeat("t", 200) + "\r\n\r\n", status: 200, body: "ok"},
		{name: "long content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: " + strings.Repeat("0", 100) + "2\r\n\r\nok", wantError: true},
		{name: "long status line", in: "HTTP/1.1 200 " + strings.Repeat("K", 100) + "\r\n\r\n", wantError: true},
		{name: "empty", in: "", wantError: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkParse(t, tc.in, tc.head, tc.wantError, tc.status, tc.body, tc.close)
		})
	}
}

// checkParse parses in (the answer to a HEAD request when head is set) and
// wants an error when wantError is set; else the status, body and close
// given, with every byte of in counted.
func checkParse(t *testing.T, in string, head, wantError bool, status int, body string, close bool) {
	t.Helper()
	h, gotBody, n, err := parse(in, head)
	if wantError {
		if err == nil {
			t.Fatalf("parse succeeded with status %d body %q; want an error", h.status, gotBody)
		}
		return
	}
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if h.status != status || gotBody != body || h.close != close {
		t.Errorf("got status %d body %q close %v; want %d %q %v", h.status, gotBody, h.close, status, body, close)
	}
	if n != int64(len(in)) {
		t.Errorf("counted %d bytes; want %d", n, len(in))
	}
}

// FuzzParseResponse checks the parser against net/http's: it must never
// panic, and when both accept a response they must agree on its status and
// body.
func FuzzParseResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nbody to eof",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 3\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, body, n, err := parse(string(data), false)
		if n > int64(len(data)) {
			t.Fatalf("counted %d bytes of %d", n, len(data))
		}
		if err != nil {
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), nil)
		if err != nil || resp.StatusCode < 200 {
			return
		}
		want, err := io.ReadAll(resp.Body)
		if err != nil {
			return
		}
		if resp.StatusCode != h.status || string(want) != body {
			t.Fatalf("parsed status %d body %q; net/http says %d %q", h.status, body, resp.StatusCode, want)
		}
	})
}

// repeatReader yields data over and over.
type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.data[r.off:])
		n += c
		r.off = (r.off + c) % len(r.data)
	}
	return n, nil
}

func newTestReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, readBufferSize) }
