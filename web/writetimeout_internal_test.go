package web

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// cuttable is an HTTP/2 stream's ResponseWriter whose writes fail once cut
// is closed, so that a test can end a write that would not return.
type cuttable struct {
	http.ResponseWriter
	cut <-chan struct{}
}

var errCut = errors.New("cut off by the test")

func (c cuttable) Write(p []byte) (int, error) {
	select {
	case <-c.cut:
		return 0, errCut
	default:
		return c.ResponseWriter.Write(p)
	}
}

func (c cuttable) WriteString(s string) (int, error) {
	select {
	case <-c.cut:
		return 0, errCut
	default:
		return io.WriteString(c.ResponseWriter, s)
	}
}

func (c cuttable) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// TestStreamWriterReturnsOnceWritten: an HTTP/2 response's Write and
// WriteString, cut in chunks to re-arm the stream's deadline, return once
// the last chunk is written, whether the length is a multiple of the chunk
// or not, having written every byte once. A loop that misses its end goes
// on writing nothing: the test gives each write 10 s, then cuts the
// stream's writes off to end it (writetimeout.go, streamWriter's
// written == len(p) and written == len(s)).
func TestStreamWriterReturnsOnceWritten(t *testing.T) {
	const chunk = 3
	type result struct {
		n   int
		err error
	}
	cut := make(chan struct{})
	cutOff := sync.OnceFunc(func() { close(cut) })
	defer cutOff()
	results := make(chan result, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &streamWriter{ResponseWriter: cuttable{w, cut}, timeout: 10 * time.Second, chunk: chunk}
		body := r.URL.Query().Get("body")
		var res result
		if r.URL.Path == "/string" {
			res.n, res.err = sw.WriteString(body)
		} else {
			res.n, res.err = sw.Write([]byte(body))
		}
		results <- res
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	client := srv.Client()

	type response struct {
		proto, body string
		err         error
	}
	get := func(url string) <-chan response {
		got := make(chan response, 1)
		go func() {
			resp, err := client.Get(url)
			if err != nil {
				got <- response{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			got <- response{resp.Proto, string(b), err}
		}()
		return got
	}
	for _, path := range []string{"/write", "/string"} {
		for _, body := range []string{"ab", "abcdef", "abcdefgh"} {
			got := get(srv.URL + path + "?body=" + body)
			var res result
			select {
			case res = <-results:
			case <-time.After(10 * time.Second):
				t.Errorf("%s of %d bytes in chunks of %d: still writing after 10 s", path, len(body), chunk)
				cutOff()
				<-results
				<-got
				return
			}
			resp := <-got
			if res.n != len(body) || res.err != nil || resp.err != nil || resp.proto != "HTTP/2.0" || resp.body != body {
				t.Errorf("%s of %q in chunks of %d: returned %d, %v; client read %s %q, %v; want %d, nil and the body over HTTP/2",
					path, body, chunk, res.n, res.err, resp.proto, resp.body, resp.err, len(body))
			}
		}
	}
}
