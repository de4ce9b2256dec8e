package nbio_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/loomrt/loom/web/internal/webtest"
)

// exchangeInParts is exchange with raw written in parts, a pause after
// each so that the server reads them apart. A busy machine may still merge
// two parts into one read: the request is then read as if sent whole,
// which only hides what a test looks for, never fakes it.
func exchangeInParts(t testing.TB, base string, parts []string, n int) (got []string) {
	t.Helper()
	c := webtest.Dial(t, base)
	done := make(chan struct{})
	t.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		for _, p := range parts {
			if _, err := io.WriteString(c, p); err != nil {
				return // refused and closed
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	br := bufio.NewReader(c)
	for len(got) < n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("no answer and no close in 20s after %q", got)
			}
			return got
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return append(got, strconv.Itoa(resp.StatusCode)+" (body cut: "+err.Error()+")")
		}
		a := strconv.Itoa(resp.StatusCode)
		if len(b) > 0 {
			a += " " + string(b)
		}
		got = append(got, a)
	}
	return got
}

// TestReadBoundaries: where a read ends decides where the engine looks
// for the next request, and how much of it it checks. Each case ends a
// read at a chosen place — inside the request after a chunked body, at the
// end of a chunked body, inside a declared body — and wants the answers
// net/http gives. A request with a space in a header name, which nbio's
// parser takes (cut at the space) and the engine's scan refuses, shows
// whether the engine scanned it.
func TestReadBoundaries(t *testing.T) {
	const chunked = "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
	const postC = `200 POST /c host=a x="" body="hi"`
	for _, tt := range []struct {
		name  string
		parts []string
		want  []string
	}{
		// conn.go completed's phaseChunked: the request after the chunked
		// body began in its read, and is in nbio's parser's hands.
		{"a request begun in the read that ends a chunked body",
			[]string{chunked + "GET /2 HT", "TP/1.1\r\nHost: a\r\n\r\n"},
			[]string{postC, `200 GET /2 host=a x="" body=""`}},
		// completed's phaseBlind: so is the one after it.
		{"two requests after a chunked body, the second cut by the read",
			[]string{chunked + "GET /2 HTTP/1.1\r\nHost: a\r\n\r\nGET /3 HT", "TP/1.1\r\nHost: a\r\n\r\n"},
			[]string{postC, `200 GET /2 host=a x="" body=""`, `200 GET /3 host=a x="" body=""`}},
		// completed's !st.readEnd: a read that ends with the chunked body
		// leaves the next request to the engine's checks.
		{"a chunked body that ends its read, then a spaced header name",
			[]string{chunked, "GET /2 HTTP/1.1\r\nHost: a\r\nX Y: v\r\n\r\n"},
			[]string{postC, "400 400 Bad Request: invalid header name"}},
		// read's st.left == 0: a declared body still arriving is the
		// engine's to count, and the request after it to check.
		{"a declared body in two reads, then a spaced header name",
			[]string{"POST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nab", "cdGET /2 HTTP/1.1\r\nHost: a\r\nX Y: v\r\n\r\n"},
			[]string{`200 POST /b host=a x="" body="abcd"`, "400 400 Bad Request: invalid header name"}},
	} {
		for _, eng := range engines {
			t.Run(tt.name+"/"+eng.name, func(t *testing.T) {
				base, _ := webtest.Serve(t, conformanceApp(t, eng.engine))
				if got := exchangeInParts(t, base, tt.parts, len(tt.want)); !matches(got, tt.want) {
					t.Errorf("got %q; want %q", got, tt.want)
				}
			})
		}
	}
}
