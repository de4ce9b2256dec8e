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
		{name: "204 has no body, whatever its length says", in: "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", status: 204},
		{name: "HEAD has no body", in: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", head: true, status: 200},
		{name: "1xx skipped", in: "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok"},
		{name: "same length twice", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok"},
		{name: "two lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", wantError: true},
		{name: "bad length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", wantError: true},
		{name: "bad status line", in: "HTTP/2 200 OK\r\n\r\n", wantError: true},
		{name: "not HTTP", in: "XTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", wantError: true},
		{name: "no space after the version", in: "HTTP/1.1x200 OK\r\nContent-Length: 0\r\n\r\n", wantError: true},
		// Not an interim response to skip: a status below 100 is refused.
		{name: "status below 100", in: "HTTP/1.1 099 Low\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", wantError: true},
		// A coding other than chunked last: the body lasts until the
		// connection closes, whatever its length says.
		{name: "unknown coding beats length", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nokmore", status: 200, body: "okmore", close: true},
		{name: "status with letters", in: "HTTP/1.1 2x0 OK\r\n\r\n", wantError: true},
		{name: "header without colon", in: "HTTP/1.1 200 OK\r\nnonsense\r\n\r\n", wantError: true},
		{name: "folded header", in: "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", wantError: true},
		{name: "short body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", wantError: true},
		{name: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", wantError: true},
		{name: "chunk without CRLF", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n0\r\n\r\n", wantError: true},
		{name: "long header skipped", in: "HTTP/1.1 200 OK\r\nSet-Cookie: " + strings.Repeat("a", 200) + "\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok"},
		{name: "long trailer skipped", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX: " + strings.Repeat("t", 200) + "\r\n\r\n", status: 200, body: "ok"},
		{name: "long content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: " + strings.Repeat("0", 100) + "2\r\n\r\nok", wantError: true},
		// The other two headers the parser reads cannot be skipped either.
		{name: "long transfer-encoding", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: " + strings.Repeat(" ", 100) + "chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", wantError: true},
		{name: "long connection", in: "HTTP/1.1 200 OK\r\nConnection: " + strings.Repeat(" ", 100) + "close\r\nContent-Length: 2\r\n\r\nok", wantError: true},
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

// TestParseChunkSizeAndDecimal takes the two number parsers at every edge
// of their digits, their length and their white space: a byte just outside
// each digit range is refused by the parser itself, not later by a body
// that turns out short.
func TestParseChunkSizeAndDecimal(t *testing.T) {
	for _, tc := range []struct {
		in string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"9", 9, true}, {"a", 10, true}, {"f", 15, true}, {"A", 10, true}, {"F", 15, true},
		{"/", 0, false}, {":", 0, false}, {"`", 0, false}, {"g", 0, false}, {"@", 0, false}, {"G", 0, false},
		{"", 0, false}, {" ", 0, false}, {";ext", 0, false},
		{"\t1f \t;ext=1", 31, true},
		{strings.Repeat("f", 15), 1<<60 - 1, true},
		{strings.Repeat("0", 16), 0, false},
	} {
		if v, ok := parseChunkSize([]byte(tc.in)); v != tc.v || ok != tc.ok {
			t.Errorf("parseChunkSize(%q) = %d, %v; want %d, %v", tc.in, v, ok, tc.v, tc.ok)
		}
	}
	for _, tc := range []struct {
		in string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"9", 9, true}, {"/", 0, false}, {":", 0, false},
		{"", 0, false},
		{strings.Repeat("9", 18), 999999999999999999, true},
		{strings.Repeat("0", 19), 0, false},
	} {
		if v, ok := parseDecimal([]byte(tc.in)); v != tc.v || ok != tc.ok {
			t.Errorf("parseDecimal(%q) = %d, %v; want %d, %v", tc.in, v, ok, tc.v, tc.ok)
		}
	}
	for in, want := range map[string]string{"": "", " \t": "", "\t2\t": "2", " a b ": "a b"} {
		if got := string(trimSpace([]byte(in))); got != want {
			t.Errorf("trimSpace(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestHeaderNameSeparators: each separator RFC 9110 keeps out of a token
// makes a header name invalid, and the response with it an error.
func TestHeaderNameSeparators(t *testing.T) {
	for _, sep := range `()<>@,;\"/[]?={}` {
		in := "HTTP/1.1 200 OK\r\nX" + string(sep) + "Y: z\r\nContent-Length: 1\r\n\r\nx"
		if _, _, _, err := parse(in, false); err == nil {
			t.Errorf("header name %q: no error; want one", "X"+string(sep)+"Y")
		}
	}
}
