package web_test

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

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// withBody returns a request with head's line and fields, a Content-Length
// of body's length, and body.
func withBody(head, body string) string {
	return head + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// TestFramingScan feeds streams to a connection's framing scan whole, a
// byte at a time and cut in two at every offset, and wants the same notes:
// each header section's framing fields, in order, never a field line of a
// body, and "lost" where the bytes do not frame as net/http frames them.
func TestFramingScan(t *testing.T) {
	const post, chunked = "POST / HTTP/1.1\r\nHost: a\r\n", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	const next = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	fields := "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
	tests := []struct {
		name, stream string
		want         []string
	}{
		{"neither", next, []string{"-"}},
		{"a length", withBody(post, "abc"), []string{"length"}},
		{"chunked", chunked + "0\r\n\r\n", []string{"coding"}},
		{"both", post + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", []string{"both"}},
		{"both, the other way round, any case", "POST / HTTP/1.1\r\ntransfer-ENCODING: chunked\r\nHost: a\r\ncOnTeNt-LeNgTh: 3\r\n\r\n", []string{"both"}},
		{"both with bare LFs", "POST / HTTP/1.1\nContent-Length: 3\nTransfer-Encoding: chunked\n\n", []string{"both"}},
		{"in two requests", withBody(post, "abc") + chunked + "0\r\n\r\n", []string{"length", "coding"}},
		{"in two requests with bare LFs", "POST / HTTP/1.1\nContent-Length: 0\n\nPOST / HTTP/1.1\nTransfer-Encoding: chunked\n\n0\r\n\r\n" + next, []string{"length", "coding", "-"}},
		{"not at a line's start", "GET / HTTP/1.1\r\nX-Content-Length: 3\r\nX: Transfer-Encoding: chunked\r\n\r\n", []string{"-"}},
		{"names that only begin the same", "GET / HTTP/1.1\r\nContent-Lengths: 3\r\nTransfer-Encodings: chunked\r\nContent\r\nTransfer\n\r\n", []string{"-"}},
		{"a length with whitespace", post + "Content-Length: \t3 \r\n\r\nabc" + next, []string{"length", "-"}},
		{"a length of 24 digits", post + "Content-Length: 000000000000000000000003\r\n\r\nabc" + next, []string{"length", "-"}},
		{"a length of 2^63-1", post + "Content-Length: 9223372036854775807\r\n\r\n" + next, []string{"length"}},
		{"the fields in a body by its length", withBody(post, fields) + next, []string{"length", "-"}},
		{"the fields in a chunk", chunked + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(fields), fields) + next, []string{"coding", "-"}},
		{"the fields in a trailer", chunked + "0\r\n" + fields + next, []string{"coding", "-"}},
		{"a trailer ended by a bare LF", chunked + "0\r\nX: a\n\n" + next, []string{"coding", "-"}},
		{"chunk extensions and whitespace", chunked + "3;a=b\r\nabc\r\n2 \t\r\nde\r\n000000000000000a\r\n0123456789\r\n0;x\r\n\r\n" + next, []string{"coding", "-"}},
		{"a chunk of 255 bytes", chunked + "Ff\r\n" + strings.Repeat("\n", 255) + "\r\n0\r\n\r\n" + next, []string{"coding", "-"}},

		{"a line folded after another field", post + "X: a\r\n\tb\r\n b\r\nContent-Length: 3\r\n\r\nabc" + next, []string{"length", "-"}},
		{"a length folded with a tab", post + "Content-Length: 3\r\n\t3\r\n\r\nabc" + next, []string{"lost"}},
		{"a length with a letter", post + "Content-Length: 3a\r\n\r\nabc" + next, []string{"lost"}},
		{"a length with a colon", post + "Content-Length: 3:\r\n\r\nabc" + next, []string{"lost"}},
		{"a chunk size with a letter", chunked + "3g\r\nabc\r\n0\r\n\r\n" + next, []string{"coding", "lost"}},
		{"a chunk size of @", chunked + "@\r\n" + next, []string{"coding", "lost"}},
		{"a chunk size of /", chunked + "/\r\n" + next, []string{"coding", "lost"}},
		{"a chunk size of :", chunked + ":\r\n" + next, []string{"coding", "lost"}},
		{"a length with a sign", post + "Content-Length: +3\r\n\r\nabc" + next, []string{"lost"}},
		{"an empty length", post + "Content-Length: \r\n\r\n" + next, []string{"lost"}},
		{"a length of 2^63", post + "Content-Length: 9223372036854775808\r\n\r\nabc" + next, []string{"lost"}},
		{"a length of two numbers", post + "Content-Length: 3 3\r\n\r\nabc" + next, []string{"lost"}},
		{"a CR inside a length", post + "Content-Length: 3\rX\r\n\r\nabc" + next, []string{"lost"}},
		{"a length folded onto the next line", post + "Content-Length: 3\r\n 3\r\n\r\nabc" + next, []string{"lost"}},
		{"a line that begins with a CR", "GET / HTTP/1.1\r\n\rX\r\n\r\n" + next, []string{"lost"}},
		{"a chunk size that is not hexadecimal", chunked + "z\r\nabc\r\n0\r\n\r\n" + next, []string{"coding", "lost"}},
		{"a chunk size of 17 digits", chunked + "00000000000000003\r\nabc\r\n0\r\n\r\n" + next, []string{"coding", "lost"}},
		{"an empty chunk size", chunked + "\r\n" + next, []string{"coding", "lost"}},
		{"an extension without a size", chunked + ";x\r\n" + next, []string{"coding", "lost"}},
		{"whitespace before an extension", chunked + "3 ;x\r\nabc\r\n0\r\n\r\n" + next, []string{"coding", "lost"}},
		{"a digit after whitespace", chunked + "3 3\r\nabc\r\n0\r\n\r\n" + next, []string{"coding", "lost"}},
		{"a bare LF after a chunk size", chunked + "3\nabc\r\n0\r\n\r\n" + next, []string{"coding", "lost"}},
		{"a bare LF after an extension", chunked + "3;x\nabc\r\n0\r\n\r\n" + next, []string{"coding", "lost"}},
		{"a CR not before an LF in a chunk size", chunked + "3\rX\r\nabc\r\n0\r\n\r\n" + next, []string{"coding", "lost"}},
		{"a chunk without its CRLF", chunked + "3\r\nabcX0\r\n\r\n" + next, []string{"coding", "lost"}},
		{"a chunk with a bare LF", chunked + "3\r\nabc\n0\r\n\r\n" + next, []string{"coding", "lost"}},
		{"a trailer line that begins with a CR", chunked + "0\r\n\rX: a\r\n\r\n" + next, []string{"coding", "lost"}},
	}
	for _, tt := range tests {
		check := func(how string, got []string) {
			t.Helper()
			if !slices.Equal(got, tt.want) {
				t.Errorf("%s, %s: got %q; want %q", tt.name, how, got, tt.want)
			}
		}
		stream := []byte(tt.stream)
		check("whole", web.FramingNotes(stream))
		bytewise := make([]int, len(stream))
		for i := range bytewise {
			bytewise[i] = i
		}
		check("a byte at a time", web.FramingNotes(stream, bytewise...))
		for i := range len(stream) {
			check("cut at "+strconv.Itoa(i), web.FramingNotes(stream, i))
		}
	}
}

// TestFramingScanBound: a connection notes 1024 header sections ahead of
// its handler, five times what net/http can read ahead, and stops following
// its requests at one more (a hijacked connection's bytes are not
// requests).
func TestFramingScanBound(t *testing.T) {
	const bound, section = 1024, "GET / HTTP/1.1\n\n"
	for _, n := range []int{bound, bound + 1} {
		got := web.FramingNotes([]byte(strings.Repeat(section, n)))
		want := slices.Repeat([]string{"-"}, bound)
		if n > bound {
			want = append(want, "lost")
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d sections: got %d notes ending %q; want %d ending %q", n, len(got), got[len(got)-1], len(want), want[len(want)-1])
		}
	}
}

// FuzzFramingScan wants the notes of a stream cut in three to be those of
// the stream whole: they must not depend on how the bytes arrive.
func FuzzFramingScan(f *testing.F) {
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"), uint16(20), uint16(40))
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcPOST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\n\n"), uint16(37), uint16(39))
	f.Fuzz(func(t *testing.T, stream []byte, i, j uint16) {
		a, b := min(int(i), len(stream)), min(int(j), len(stream))
		if a > b {
			a, b = b, a
		}
		if whole, split := web.FramingNotes(stream), web.FramingNotes(stream, a, b); !slices.Equal(whole, split) {
			t.Fatalf("%q cut at %d, %d: got %q; whole: %q", stream, a, b, split, whole)
		}
	})
}

// TestServeFramesEachRequest sends raw requests to an App on the std
// engine and wants each answered by its own framing: a chunked request
// with a Content-Length closes the connection after its answer, an
// HTTP/1.0 request with a Transfer-Encoding is refused, and neither
// follows from the requests before it on the connection or from the lines
// of a body. Each stream ends with a GET /last that is answered when the
// connection stays open.
func TestServeFramesEachRequest(t *testing.T) {
	const last = "GET /last HTTP/1.1\r\nHost: a\r\n\r\n"
	const post = "POST /p HTTP/1.1\r\nHost: a\r\n"
	const http10 = "GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
	fields := "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
	chunked := post + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
	both := post + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
	tests := []struct {
		name, raw string
		want      []string
		close     bool
	}{
		{"chunked, then HTTP/1.0", chunked + http10 + last,
			[]string{"200 POST /p abc", "200 GET /old ", "200 GET /last "}, false},
		{"both, then one more", both + last,
			[]string{"200 POST /p abc"}, true},
		{"chunked, then both, then one more", chunked + both + last,
			[]string{"200 POST /p abc", "200 POST /p abc"}, true},
		{"HTTP/1.0 with Transfer-Encoding", "POST /old HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello" + last,
			[]string{"400"}, true},
		{"HTTP/1.0 with Transfer-Encoding after a chunked request", chunked + "POST /old HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello" + last,
			[]string{"200 POST /p abc", "400"}, true},
		{"the fields in a body by its length, then chunked, then HTTP/1.0", withBody(post, fields) + chunked + http10 + last,
			[]string{"200 POST /p " + fields, "200 POST /p abc", "200 GET /old ", "200 GET /last "}, false},
		{"the fields in a chunk, then chunked", post + "Transfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(fields), fields) + chunked + last,
			[]string{"200 POST /p " + fields, "200 POST /p abc", "200 GET /last "}, false},
		{"the fields in a trailer, then chunked", post + "Transfer-Encoding: chunked\r\n\r\n0\r\n" + fields + chunked + last,
			[]string{"200 POST /p ", "200 POST /p abc", "200 GET /last "}, false},
		// net/http answers OPTIONS * itself unless told not to; Serve
		// answers it so that the handler sees every request.
		{"OPTIONS *, then both", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n" + both + last,
			[]string{"200", "200 POST /p abc"}, true},
		{"OPTIONS * with both", "OPTIONS * HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + last,
			[]string{"200"}, true},
		{"OPTIONS of a path", "OPTIONS /p HTTP/1.1\r\nHost: a\r\n\r\n" + last,
			[]string{"200 OPTIONS /p ", "200 GET /last "}, false},
		{"the HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
			[]string{"400"}, true},
		// A request whose framing the connection cannot follow closes it.
		{"a length folded onto a second line", post + "Content-Length:\r\n 3\r\n\r\nabc" + last,
			[]string{"200 POST /p abc"}, true},
	}
	app := webtest.NewApp(t)
	app.Handle("", "/{path...}", web.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s %s %s", r.Method, r.URL, b)
		return err
	}))
	base, _ := webtest.Serve(t, app)
	for _, tt := range tests {
		got, closed := rawAnswers(t, base, tt.raw)
		if !slices.Equal(got, tt.want) || closed != tt.close {
			t.Errorf("%s: got %q, closed %v; want %q, closed %v", tt.name, got, closed, tt.want, tt.close)
		}
	}
}

// rawAnswers sends raw on a new connection to base and returns the
// answers, each as its status and body, until the server closes the
// connection (closed) or a GET /last is answered.
func rawAnswers(t *testing.T, base, raw string) (got []string, closed bool) {
	t.Helper()
	c := webtest.Dial(t, base)
	go func() { _, _ = io.WriteString(c, raw) }()
	br := bufio.NewReader(c)
	for {
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
			t.Fatalf("answer %d: %v", len(got)+1, err)
		}
		a := strconv.Itoa(resp.StatusCode)
		if resp.StatusCode == http.StatusOK && len(b) > 0 {
			a += " " + string(b)
		}
		got = append(got, a)
		if strings.HasPrefix(a, "200 GET /last") {
			return got, resp.Close
		}
	}
}

// TestServeFramingLeavesHTTP2Alone: HTTP/2 in cleartext (WithH2C) runs on
// a connection of Serve's, whose bytes after the preface are not HTTP/1
// requests; its requests must not take their notes, which would close the
// connection (a GOAWAY) after the first few.
func TestServeFramingLeavesHTTP2Alone(t *testing.T) {
	const n = 6
	app := webtest.NewApp(t, web.WithH2C())
	var remotes []string
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		remotes = append(remotes, r.RemoteAddr) // one request at a time
		_, err := io.WriteString(w, r.Proto)
		return err
	})
	base, _ := webtest.Serve(t, app)
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &h2c}
	defer tr.CloseIdleConnections()
	for i := range n {
		if r := <-webtest.GetAsync(&http.Client{Transport: tr}, base+"/"); r.Err != nil || r.Body != "HTTP/2.0" {
			t.Fatalf("request %d: got %d %q %v; want 200 HTTP/2.0", i, r.Status, r.Body, r.Err)
		}
	}
	if conns := slices.Compact(remotes); len(conns) != 1 {
		t.Errorf("%d requests came over the connections %q; want one", n, conns)
	}
}

// TestServeAnswersOptionsStar: Serve answers OPTIONS * as net/http does,
// 200 and no body, unless the server's DisableGeneralOptionsHandler hands
// it to the App. (framing.go, closeAmbiguousFraming's options.)
func TestServeAnswersOptionsStar(t *testing.T) {
	for _, disable := range []bool{false, true} {
		app := webtest.NewApp(t, web.WithServerConfig(func(s *http.Server) { s.DisableGeneralOptionsHandler = disable }))
		base, _ := webtest.Serve(t, app)
		got, _ := rawAnswers(t, base, "OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
		want := []string{"200"}
		if disable {
			want = []string{"400"} // the App's: "*" is not a path
		}
		if !slices.Equal(got, want) {
			t.Errorf("DisableGeneralOptionsHandler %v: got %q; want %q", disable, got, want)
		}
	}
}
