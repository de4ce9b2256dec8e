package nbio_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// conformance is the request-parsing table of RFC 9110 and RFC 9112: raw
// request bytes, the section that says what a server must do with them,
// and the answers it must give, in order ("400": the status alone; "200
// GET /p host=a x="" body=""": the status and what echo wrote), and
// whether the connection must then be closed. Every row holds on both
// engines; the rows that differ on nbio say so, with the reason, and are
// listed in docs/web.md.
var conformance = []struct {
	name, raw, rfc string
	want           []string
	close          bool     // the server must close the connection after the answers
	nbio           []string // where nbio differs (docs/web.md): its answers
}{
	// The request line (RFC 9112 §3).
	{name: "a plain GET", raw: "GET /p?q=1 HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §3",
		want: []string{`200 GET /p?q=1 host=a x="" body=""`}},
	{name: "methods are case-sensitive", raw: "get / HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9110 §9.1",
		want: []string{`200 get / host=a x="" body=""`}},
	{name: "an extension method", raw: "PROPFIND / HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9110 §9.1",
		want: []string{`200 PROPFIND / host=a x="" body=""`}},
	{name: "an extension method with a hyphen", raw: "M-SEARCH / HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9110 §9.1",
		want: []string{`200 M-SEARCH / host=a x="" body=""`}},
	{name: "a method that is not a token", raw: "G@T / HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §3.1",
		want: []string{"400"}, close: true},
	{name: "two spaces after the method", raw: "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §3",
		want: []string{"400"}, close: true},
	{name: "no version", raw: "GET /\r\nHost: a\r\n\r\n", rfc: "9112 §3",
		want: []string{"400"}, close: true},
	{name: "a word after the version", raw: "GET / HTTP/1.1 x\r\nHost: a\r\n\r\n", rfc: "9112 §3",
		want: []string{"400"}, close: true},
	{name: "a malformed version", raw: "GET / HTTP/9.x\r\nHost: a\r\n\r\n", rfc: "9112 §2.3",
		want: []string{"400"}, close: true},
	{name: "the version in lower case", raw: "GET / http/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §2.3",
		want: []string{"400"}, close: true},
	{name: "HTTP/2.0 over HTTP/1 framing", raw: "GET / HTTP/2.0\r\nHost: a\r\n\r\n", rfc: "9110 §15.6.6",
		want: []string{"505"}, close: true},
	{name: "HTTP/1.0 without Host", raw: "GET / HTTP/1.0\r\n\r\n", rfc: "9112 §3.2",
		want: []string{`200 GET / host= x="" body=""`}, close: true},
	{name: "a control byte in the target", raw: "GET /a\x01b HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §3.2",
		want: []string{"400"}, close: true},
	{name: "a request line of one word", raw: "GET\r\n\r\n", rfc: "9112 §3",
		want: []string{"400"}, close: true},
	// A SHOULD (ignore one empty line first) that net/http does not follow.
	{name: "an empty line before the request line", raw: "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §2.2",
		want: []string{"400"}, close: true},

	// Target forms (RFC 9112 §3.2).
	{name: "a relative target", raw: "GET p HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §3.2.1",
		want: []string{"400"}, close: true},
	{name: "absolute-form, whose host overrides Host", raw: "GET http://b/p?q HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §3.2.2",
		want: []string{`200 GET http://b/p?q host=b x="" body=""`}},
	{name: "absolute-form still needs Host in HTTP/1.1", raw: "GET http://b/p HTTP/1.1\r\n\r\n", rfc: "9112 §3.2",
		want: []string{"400"}, close: true},

	// Host (RFC 9112 §3.2, RFC 9110 §7.2).
	{name: "HTTP/1.1 without Host", raw: "GET / HTTP/1.1\r\n\r\n", rfc: "9112 §3.2",
		want: []string{"400"}, close: true},
	{name: "two Host fields", raw: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", rfc: "9112 §3.2",
		want: []string{"400"}, close: true},
	{name: "two equal Host fields", raw: "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", rfc: "9112 §3.2",
		want: []string{"400"}, close: true},
	{name: "a Host with a space", raw: "GET / HTTP/1.1\r\nHost: x y\r\n\r\n", rfc: "9112 §3.2",
		want: []string{"400"}, close: true},
	{name: "a Host with a slash", raw: "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", rfc: "9112 §3.2",
		want: []string{"400"}, close: true},
	{name: "an empty Host", raw: "GET / HTTP/1.1\r\nHost:\r\n\r\n", rfc: "9112 §3.2",
		want: []string{`200 GET / host= x="" body=""`}},
	{name: "a Host with a port and an IPv6 literal", raw: "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", rfc: "9110 §7.2",
		want: []string{`200 GET / host=[::1]:8080 x="" body=""`}},

	// Field lines (RFC 9112 §5, RFC 9110 §5.5).
	{name: "whitespace around a value is not part of it", raw: "GET / HTTP/1.1\r\nHost: a\r\nX: \t v w \t\r\n\r\n", rfc: "9112 §5.1",
		want: []string{`200 GET / host=a x="v w" body=""`}},
	{name: "a space before the colon", raw: "GET / HTTP/1.1\r\nHost: a\r\nX : v\r\n\r\n", rfc: "9112 §5.1",
		want: []string{"400"}, close: true},
	{name: "a space in a name", raw: "GET / HTTP/1.1\r\nHost: a\r\nX Y: v\r\n\r\n", rfc: "9110 §5.1",
		want: []string{"400"}, close: true},
	{name: "a tab in a name", raw: "GET / HTTP/1.1\r\nHost: a\r\nX\tY: v\r\n\r\n", rfc: "9110 §5.1",
		want: []string{"400"}, close: true},
	{name: "an empty name", raw: "GET / HTTP/1.1\r\nHost: a\r\n: v\r\n\r\n", rfc: "9110 §5.1",
		want: []string{"400"}, close: true},
	{name: "a line without a colon", raw: "GET / HTTP/1.1\r\nHost: a\r\nX\r\n\r\n", rfc: "9112 §5",
		want: []string{"400"}, close: true},
	{name: "a name with a non-token byte", raw: "GET / HTTP/1.1\r\nHost: a\r\nX(: v\r\n\r\n", rfc: "9110 §5.1",
		want: []string{"400"}, close: true},
	{name: "NUL in a value", raw: "GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n", rfc: "9110 §5.5",
		want: []string{"400"}, close: true},
	{name: "a bare CR in a value", raw: "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", rfc: "9110 §5.5",
		want: []string{"400"}, close: true},
	{name: "a control byte in a value", raw: "GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n", rfc: "9110 §5.5",
		want: []string{"400"}, close: true},
	{name: "DEL in a value", raw: "GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fb\r\n\r\n", rfc: "9110 §5.5",
		want: []string{"400"}, close: true},
	{name: "obs-text in a value", raw: "GET / HTTP/1.1\r\nHost: a\r\nX: a\xe9b\r\n\r\n", rfc: "9110 §5.5",
		want: []string{`200 GET / host=a x="a\xe9b" body=""`}},
	// Obsolete line folding: a server MUST reject it or replace it with
	// spaces; net/http replaces, nbio rejects.
	{name: "a folded line", raw: "GET / HTTP/1.1\r\nHost: a\r\nX: v\r\n w\r\n\r\n", rfc: "9112 §5.2",
		want: []string{`200 GET / host=a x="v w" body=""`}, nbio: []string{"400"}},
	{name: "a folded first line", raw: "GET / HTTP/1.1\r\n Host: a\r\n\r\n", rfc: "9112 §2.2",
		want: []string{"400"}, close: true},
	// Lines ending in a bare LF: a server MAY take them; net/http does,
	// nbio does not, and says it is the line (conn.go, readRequestLine's
	// '\r': the line is not read without its CR).
	{name: "bare LF line ends", raw: "GET / HTTP/1.1\nHost: a\n\n", rfc: "9112 §2.2",
		want: []string{`200 GET / host=a x="" body=""`}, nbio: []string{"400 400 Bad Request: malformed request line"}},
	// A bare LF after a byte more than a version: the line is refused as a
	// line, before its version is read, so "HTTP/1.1" before that byte is
	// never taken for the version (the same status on both engines).
	{name: "bare LF after a malformed version", raw: "GET / HTTP/1.1X\nHost: a\n\n", rfc: "9112 §2.3",
		want: []string{"400"}, nbio: []string{"400 400 Bad Request: malformed request line"}},

	// Content-Length (RFC 9110 §8.6, RFC 9112 §6.2, §6.3).
	{name: "a body of a declared length", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", rfc: "9112 §6.2",
		want: []string{`200 POST / host=a x="" body="hello"`}},
	{name: "a length with leading zeros", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 005\r\n\r\nhello", rfc: "9110 §8.6",
		want: []string{`200 POST / host=a x="" body="hello"`}},
	{name: "a length with a plus sign", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhello", rfc: "9110 §8.6",
		want: []string{"400"}, close: true},
	// In HTTP/1.0 too, with net/http's answer whole: the parser's error is
	// not the one of a Transfer-Encoding in HTTP/1.0 (conn.go, read's
	// status == 501).
	{name: "a length that is not a number, in HTTP/1.0", raw: "GET / HTTP/1.0\r\nContent-Length: abc\r\n\r\n", rfc: "9110 §8.6",
		want: []string{"400 400 Bad Request"}, close: true},
	{name: "a negative length", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", rfc: "9110 §8.6",
		want: []string{"400"}, close: true},
	{name: "an empty length", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", rfc: "9110 §8.6",
		want: []string{"400"}, close: true},
	{name: "a length in hexadecimal", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x5\r\n\r\nhello", rfc: "9110 §8.6",
		want: []string{"400"}, close: true},
	{name: "a length list", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhello", rfc: "9110 §8.6",
		want: []string{"400"}, close: true},
	{name: "a length past 2^63", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", rfc: "9110 §8.6",
		want: []string{"400"}, close: true},
	{name: "two equal lengths", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", rfc: "9110 §8.6",
		want: []string{`200 POST / host=a x="" body="hello"`}},
	{name: "two different lengths", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", rfc: "9112 §6.3",
		want: []string{"400"}, close: true},
	{name: "a length over the body limit", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000000\r\n\r\n", rfc: "9110 §15.5.14",
		want: []string{"413"}, close: true},

	// Transfer codings (RFC 9112 §6.1, §7).
	{name: "a chunked body", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", rfc: "9112 §7.1",
		want: []string{`200 POST / host=a x="" body="abcde"`}},
	{name: "chunked in another case", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", rfc: "9112 §7",
		want: []string{`200 POST / host=a x="" body="abc"`}},
	{name: "an unknown transfer coding", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", rfc: "9112 §6.1",
		want: []string{"501"}, close: true},
	{name: "a coding before chunked", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", rfc: "9112 §6.1",
		want: []string{"501"}, close: true},
	{name: "two Transfer-Encoding fields", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", rfc: "9112 §6.1",
		want: []string{"501"}, close: true},
	// net/http serves the body by its chunked framing and, left alone,
	// answers the smuggled second request; Serve closes the connection.
	{name: "Content-Length and chunked, then a second request", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §6.1",
		want: []string{`200 POST / host=a x="" body="abc"`}, close: true},
	{name: "chunked before Content-Length, then a second request", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\ncontent-length: 3\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §6.1",
		want: []string{`200 POST / host=a x="" body=""`}, close: true},
	{name: "Content-Length and chunked, the length malformed", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", rfc: "9110 §8.6",
		want: []string{"400"}, close: true},
	// The framing is faulty, and the connection must close after it.
	// net/http ignores Transfer-Encoding in HTTP/1.0, frames the body by
	// its length and answers the second request; Serve refuses the first.
	{name: "HTTP/1.0 with Transfer-Encoding", raw: "POST / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhelloGET /smuggled HTTP/1.0\r\n\r\n", rfc: "9112 §6.1",
		want: []string{"400"}, close: true},

	// net/http ignores any Transfer-Encoding in HTTP/1.0, known or not.
	{name: "HTTP/1.0 with an unknown Transfer-Encoding", raw: "POST / HTTP/1.0\r\nTransfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello", rfc: "9112 §6.1",
		want: []string{"400"}, close: true},

	// The chunk grammar (RFC 9112 §7.1).
	{name: "a chunk extension", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;name=value\r\nabc\r\n0\r\n\r\n", rfc: "9112 §7.1.1",
		want: []string{`200 POST / host=a x="" body="abc"`}},
	{name: "a chunk size that is not hexadecimal", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nz\r\nabc\r\n0\r\n\r\n", rfc: "9112 §7.1",
		want: []string{"400"}, close: true},
	{name: "a chunk without its CRLF", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX0\r\n\r\n", rfc: "9112 §7.1",
		want: []string{"400"}, close: true},
	{name: "a chunk size past 2^63", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\nabc\r\n0\r\n\r\n", rfc: "9112 §7.1",
		want: []string{"400"}, close: true},
	{name: "a chunked body over the body limit", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n100001\r\n" + strings.Repeat("a", 1<<20+1) + "\r\n0\r\n\r\n", rfc: "9110 §15.5.14",
		want: []string{"413"}, close: true},

	// Expect (RFC 9110 §10.1.1; the 100 (Continue) itself is
	// TestExpectContinue's).
	{name: "an unknown expectation", raw: "POST / HTTP/1.1\r\nHost: a\r\nExpect: teapot\r\nContent-Length: 5\r\n\r\nhello", rfc: "9110 §10.1.1",
		want: []string{"417"}, close: true},
	{name: "100-continue with the body already sent", raw: "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello", rfc: "9110 §10.1.1",
		want: []string{"100", `200 POST / host=a x="" body="hello"`}},
	{name: "100-continue with a length over the body limit", raw: "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1000000000\r\n\r\n", rfc: "9110 §10.1.1",
		want: []string{"413"}, close: true},
	{name: "100-continue in HTTP/1.0 is ignored", raw: "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello", rfc: "9110 §10.1.1",
		want: []string{`200 POST / host= x="" body="hello"`}, close: true},

	// Pipelining and persistence (RFC 9112 §9.3, §9.6).
	{name: "pipelined requests answered in order", raw: "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nPOST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhiGET /3 HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §9.3.2",
		want: []string{`200 GET /1 host=a x="" body=""`, `200 POST /2 host=a x="" body="hi"`, `200 GET /3 host=a x="" body=""`}},
	// net/http skips up to four CRs or LFs after a POST's body.
	{name: "line ends after a POST", raw: "POST /1 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §2.2",
		want: []string{`200 POST /1 host=a x="" body="hi"`, `200 GET /2 host=a x="" body=""`}},
	{name: "a bare LF after a POST", raw: "POST /1 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §2.2",
		want: []string{`200 POST /1 host=a x="" body="hi"`, `200 GET /2 host=a x="" body=""`}},
	{name: "nothing after Connection: close", raw: "GET /1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §9.6",
		want: []string{`200 GET /1 host=a x="" body=""`}, close: true},
	{name: "nothing after a refused request", raw: "GET /1 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "9112 §9.6",
		want: []string{"400"}, close: true},
	{name: "HTTP/1.0 closes by default", raw: "GET /1 HTTP/1.0\r\n\r\nGET /2 HTTP/1.0\r\n\r\n", rfc: "9112 §9.3",
		want: []string{`200 GET /1 host= x="" body=""`}, close: true},

	// Limits (RFC 9110 §15.5.14, RFC 6585 §5): line and headers of
	// MaxHeaderBytes + 4 KiB are served, one byte more is refused.
	{name: "headers at the limit", raw: sized(headerLimit), rfc: "RFC 6585 §5",
		want: []string{"200"}},
	{name: "headers a byte over the limit", raw: sized(headerLimit + 1), rfc: "RFC 6585 §5",
		want: []string{"431"}, close: true},
	{name: "headers of 512 KiB", raw: sized(512 << 10), rfc: "RFC 6585 §5",
		want: []string{"200"}},
	{name: "headers far over the limit", raw: sized(headerLimit + 64<<10), rfc: "RFC 6585 §5",
		want: []string{"431"}, close: true},
	{name: "a request line over the limit", raw: "GET /" + strings.Repeat("a", headerLimit) + " HTTP/1.1\r\nHost: a\r\n\r\n", rfc: "RFC 6585 §5",
		want: []string{"431"}, close: true},
	// The engine's count of the second request's headers starts where the
	// first request's body ended.
	{name: "a request at the limit after a body", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\nFoo Bar: x\r\n" + sized(headerLimit), rfc: "RFC 6585 §5",
		want: []string{`200 POST / host=a x="" body="Foo Bar: x\r\n"`, "200"}},
}

// headerLimit is the bytes of a request's line and headers both engines
// take: net/http reads them through a reader limited to MaxHeaderBytes
// plus 4 KiB.
const headerLimit = web.DefaultMaxHeaderBytes + 4096

// echo answers with the request as the handler sees it: method, target,
// Host, the X field and the body.
func echo(w http.ResponseWriter, r *http.Request) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s %s host=%s x=%q body=%q", r.Method, r.URL, r.Host, strings.Join(r.Header["X"], ","), b)
	return err
}

// conformanceApp is an App that echoes every request, with a body limit of
// 1 MiB.
func conformanceApp(t *testing.T, e web.Engine) *web.App {
	app := newApp(t, e, web.WithBodyLimit(1<<20))
	app.Handle("", "/{path...}", web.HandlerFunc(echo))
	return app
}

func TestConformance(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			base, _ := webtest.Serve(t, conformanceApp(t, eng.engine))
			for _, tt := range conformance {
				want := tt.want
				if eng.engine != nil && tt.nbio != nil {
					want = tt.nbio
				}
				got, closed := exchange(t, base, tt.raw, len(want), tt.close)
				if !matches(got, want) || tt.close && !closed {
					t.Errorf("%s (RFC %s): got %q, closed %v; want %q, closed %v", tt.name, tt.rfc, got, closed, want, tt.close)
				}
			}
		})
	}
}

// matches reports whether got are the answers want describes: a status
// alone, or a status and a body.
func matches(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i, w := range want {
		if got[i] != w && !(len(w) == 3 && strings.HasPrefix(got[i], w+" ")) {
			return false
		}
	}
	return true
}

// exchange sends raw on a new connection to the server at base and reads up
// to n answers, each as "status body" (interim ones as their status). With
// expectClose it then reads on, and reports closed only if the server
// closed the connection without another answer.
func exchange(t testing.TB, base, raw string, n int, expectClose bool) (got []string, closed bool) {
	t.Helper()
	c := webtest.Dial(t, base)
	// The server may refuse a request before it has read all of it: write
	// on the side, and let the close end the write.
	go func() { _, _ = io.WriteString(c, raw) }()
	br := bufio.NewReader(c)
	for len(got) < n || expectClose {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("no answer and no close in 20s after %q", got)
			}
			return got, true
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return append(got, strconv.Itoa(resp.StatusCode)+" (body cut: "+err.Error()+")"), true
		}
		a := strconv.Itoa(resp.StatusCode)
		if len(b) > 0 {
			a += " " + string(b)
		}
		got = append(got, a)
		if len(got) > n {
			return got, false
		}
	}
	return got, false
}

// TestExpectContinue: a server MUST answer a request that expects 100
// (Continue), whose body is still to come, with 100 (Continue) or a final
// status at once (RFC 9110 §10.1.1): a client waits for it before it sends
// the body.
func TestExpectContinue(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			base, _ := webtest.Serve(t, conformanceApp(t, eng.engine))
			c := webtest.Dial(t, base)
			if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("before the body: %v; want 100 Continue", err)
			}
			if resp.StatusCode != http.StatusContinue {
				t.Fatalf("before the body: got %d; want 100", resp.StatusCode)
			}
			if _, err := io.WriteString(c, "hello"); err != nil {
				t.Fatal(err)
			}
			resp, err = http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := `POST / host=a x="" body="hello"`; resp.StatusCode != 200 || string(b) != want {
				t.Errorf("after the body: got %d %q; want 200 %q", resp.StatusCode, b, want)
			}
		})
	}
}

// TestRequestInParts: a request whose line, or whose headers, arrive in
// several reads is read whole, on both engines; the pauses between the
// parts make separate reads. (conn.go, readRequestLine's whole.)
func TestRequestInParts(t *testing.T) {
	parts := []string{"GET /p?q", "=1 HT", "TP/1.1\r\nHo", "st: a\r\n", "\r\n"}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			base, _ := webtest.Serve(t, conformanceApp(t, eng.engine))
			c := webtest.Dial(t, base)
			for _, p := range parts {
				if _, err := io.WriteString(c, p); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := `GET /p?q=1 host=a x="" body=""`; resp.StatusCode != 200 || string(b) != want {
				t.Errorf("got %d %q; want 200 %q", resp.StatusCode, b, want)
			}
		})
	}
}

// TestOptionsStar: OPTIONS * is answered by the engine, 200 and no body,
// as net/http does, unless DisableGeneralOptionsHandler hands it to the
// App (which refuses "*", not a path); OPTIONS of a path and the HTTP/2
// preface, PRI *, reach the App. (nbio.go, serveHTTP's optionsHandler.)
func TestOptionsStar(t *testing.T) {
	tests := []struct {
		raw     string
		disable bool
		want    string
	}{
		{"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", false, "200"},
		{"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", true, "400"},
		{"OPTIONS /p HTTP/1.1\r\nHost: a\r\n\r\n", false, `200 OPTIONS /p host=a x="" body=""`},
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", false, "400"},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			for _, disable := range []bool{false, true} {
				app := newApp(t, eng.engine, web.WithServerConfig(func(s *http.Server) { s.DisableGeneralOptionsHandler = disable }))
				app.Handle("", "/{path...}", web.HandlerFunc(echo))
				base, _ := webtest.Serve(t, app)
				for _, tt := range tests {
					if tt.disable != disable {
						continue
					}
					if got, _ := exchange(t, base, tt.raw, 1, false); len(got) != 1 || got[0] != tt.want {
						t.Errorf("%q, DisableGeneralOptionsHandler %v: got %q; want %q", tt.raw, disable, got, tt.want)
					}
				}
			}
		})
	}
}

// TestHandlersConnectionField: a handler's Connection: close closes the
// connection after its response, as on net/http; another Connection value
// does not. (nbio.go, serveHTTP's hasToken(c[0], "close").)
func TestHandlersConnectionField(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			app.Get("/{value}", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Connection", r.PathValue("value"))
				_, err := io.WriteString(w, r.PathValue("value"))
				return err
			})
			base, _ := webtest.Serve(t, app)
			for _, tt := range []struct {
				value string
				want  []string
			}{
				{"close", []string{"200 close"}},
				{"keep-alive", []string{"200 keep-alive", "200 keep-alive"}},
			} {
				raw := strings.Repeat("GET /"+tt.value+" HTTP/1.1\r\nHost: a\r\n\r\n", 2)
				if got, _ := exchange(t, base, raw, len(tt.want), tt.value == "close"); !slices.Equal(got, tt.want) {
					t.Errorf("Connection: %s: got %q; want %q", tt.value, got, tt.want)
				}
			}
		})
	}
}

// TestLineEndsAfterAPostAtAReadsEnd: the line ends net/http skips after a
// POST's body may end a read, the next request coming in a later one.
// (conn.go, read's len(data) > 0.)
func TestLineEndsAfterAPostAtAReadsEnd(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			base, _ := webtest.Serve(t, conformanceApp(t, eng.engine))
			c := webtest.Dial(t, base)
			br := bufio.NewReader(c)
			for _, part := range []string{"POST /1 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi\r\n", "GET /2 HTTP/1.1\r\nHost: a\r\n\r\n"} {
				if _, err := io.WriteString(c, part); err != nil {
					t.Fatal(err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("after %q: got %d; want 200", part, resp.StatusCode)
				}
			}
		})
	}
}
