package nbio_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/nbio"
)

// FuzzParity sends the same bytes to an App on each engine and wants the
// same answers: which requests are served or refused, and, for each served
// one, the method, target, Host, header fields, framing and body its
// handler saw. What docs/web.md lists as differing (allowedDifference) is
// let through. Its seeds are the conformance table's requests; what it
// finds is kept in testdata/fuzz/FuzzParity.
func FuzzParity(f *testing.F) {
	for _, tt := range conformance {
		if len(tt.raw) <= maxParityInput {
			f.Add([]byte(tt.raw))
		}
	}
	std, nb := serveParity(f, nil), serveParity(f, nbio.Engine())
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > maxParityInput {
			return
		}
		wait := 150 * time.Millisecond
		for {
			got := [2][]string{}
			var wg sync.WaitGroup
			for i, base := range []string{std, nb} {
				wg.Go(func() { got[i] = parityExchange(t, base, raw, wait) })
			}
			wg.Wait()
			if slices.Equal(got[0], got[1]) || allowedDifference(raw, got[0], got[1]) {
				return
			}
			if wait < 1500*time.Millisecond {
				wait *= 10 // a slow answer, on a busy machine, is not a difference
				continue
			}
			t.Fatalf("%q\nstd:  %q\nnbio: %q", raw, got[0], got[1])
		}
	})
}

// maxParityInput bounds an input: a few requests, not the limits (the
// conformance table has those), and few enough bytes that a server that
// refuses a request has read them all before it closes, so that the close
// does not reset the connection before its answer is read.
const maxParityInput = 2 << 10

// serveParity serves, until f ends, an App on engine e (nil: net/http)
// that answers every request with what its handler saw (parityEcho), and
// returns its URL.
func serveParity(f *testing.F, e web.Engine) string {
	app := newApp(f, e, web.WithBodyLimit(1<<20))
	app.Handle("", "/{path...}", web.HandlerFunc(parityEcho))
	return serve(f, app)
}

// parityEcho writes the request as its handler sees it.
func parityEcho(w http.ResponseWriter, r *http.Request) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var h strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&h, "%s=%q;", k, r.Header[k])
	}
	_, err = fmt.Fprintf(w, "%s %q %q host=%q proto=%s close=%v length=%d te=%q header={%s} body=%q",
		r.Method, r.RequestURI, r.URL.String(), r.Host, r.Proto, r.Close, r.ContentLength, r.TransferEncoding, h.String(), b)
	return err
}

// sentinel follows every input: when the input ends where a request may
// begin, its answer (and the close it asks for) ends the exchange at once.
const sentinel = "GET /sentinel HTTP/1.1\r\nHost: s\r\nConnection: close\r\n\r\n"

// parityExchange sends raw and the sentinel on a new connection to base and
// returns the answers, each "status" (and, for a 2xx, its body), until the
// server closes the connection or sends nothing for wait.
func parityExchange(t *testing.T, base string, raw []byte, wait time.Duration) []string {
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() { _, _ = c.Write(append(slices.Clip(raw), sentinel...)) }()
	var got []string
	br := bufio.NewReader(&idleReader{c: c, wait: wait})
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return got
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusContinue {
			// nbio sends it when the headers have come, net/http when the
			// handler first reads the body: TestExpectContinue's matter.
			continue
		}
		a := strconv.Itoa(resp.StatusCode)
		if resp.StatusCode/100 == 2 {
			// A refusal's body may be cut by the close that follows it
			// while the client still sends; a 2xx's must be whole.
			a += " " + string(b)
			if err != nil {
				a += " (cut)"
			}
		}
		got = append(got, a)
	}
}

// idleReader reads c, failing a read that waits longer than wait.
type idleReader struct {
	c    net.Conn
	wait time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(r.wait))
	return r.c.Read(p)
}

// allowedDifference reports whether std's and nbio's answers to raw differ
// only as docs/web.md says they may.
func allowedDifference(raw []byte, std, nb []string) bool {
	// Bare LF line ends: net/http takes them, nbio refuses them with 400
	// (RFC 9112 §2.2 allows either); and obsolete line folding, which
	// net/http joins and the engine refuses (§5.2 allows either).
	lax := bytes.Count(raw, []byte("\n")) != bytes.Count(raw, []byte("\r\n")) ||
		bytes.Contains(raw, []byte("\n ")) || bytes.Contains(raw, []byte("\n\t"))
	// Chunked bodies: nbio's parser reads chunk extensions and trailer
	// fields by grammars of its own, and reads what follows a chunked body
	// in the same read itself.
	chunked := bytes.Contains(bytes.ToLower(raw), []byte("chunked"))
	// HTTP/1.0 keep-alive: net/http keeps a connection whose Connection
	// field has keep-alive among other words, although it tells the handler
	// the request closes it (r.Close); nbio closes it.
	http10 := bytes.Contains(raw, []byte("HTTP/1.0")) && bytes.Contains(bytes.ToLower(raw), []byte("keep-alive"))
	i := 0
	for i < len(std) && i < len(nb) && std[i] == nb[i] {
		i++
	}
	if http10 && i == len(nb) {
		return true
	}
	if !lax && !chunked {
		return false
	}
	switch {
	case len(nb) > 0 && nb[len(nb)-1] == "400" && i >= len(nb)-1:
		return true // nbio refused (and closed) where net/http did not
	case chunked && (i == len(nb) || i < len(std) && std[i] == "400"):
		return true // nbio waits for more of a body net/http found malformed
	}
	return false
}
