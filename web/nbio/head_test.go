package nbio_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"testing"

	"github.com/loomrt/loom/web/internal/webtest"
)

// TestInformationalResponse: a 103 goes out at once with the fields set so
// far, and the final response follows it on both engines, to a raw client
// and to net/http's, which reports the 1xx; an HTTP/1.0 client gets none
// from nbio (RFC 9110 §15.2), only the final response.
func TestInformationalResponse(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			app.Get("/hints", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Link", "</style.css>; rel=preload; as=style")
				w.WriteHeader(http.StatusEarlyHints)
				w.Header().Set("Content-Type", "text/html")
				_, err := io.WriteString(w, "<p>page</p>")
				return err
			})
			app.Get("/late", func(w http.ResponseWriter, r *http.Request) error {
				if _, err := io.WriteString(w, "body"); err != nil {
					return err
				}
				w.WriteHeader(http.StatusEarlyHints) // after the body: ignored
				return nil
			})
			app.Get("/after-final", func(w http.ResponseWriter, r *http.Request) error {
				w.WriteHeader(http.StatusAccepted)
				w.WriteHeader(http.StatusEarlyHints) // after the final status: ignored
				return nil
			})
			for _, framing := range []string{"Content-Length", "Transfer-Encoding"} {
				app.Get("/framed/"+framing, func(w http.ResponseWriter, r *http.Request) error {
					w.Header().Set(framing, map[string]string{"Content-Length": "4", "Transfer-Encoding": "chunked"}[framing])
					w.WriteHeader(http.StatusEarlyHints)
					_, err := io.WriteString(w, "body")
					return err
				})
			}
			app.Get("/hijacked", func(w http.ResponseWriter, r *http.Request) error {
				c, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					return err
				}
				defer c.Close()
				w.WriteHeader(http.StatusEarlyHints) // on a hijacked connection: ignored
				_, err = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
				return err
			})
			app.Get("/switch", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Upgrade", "echo")
				w.Header().Set("Connection", "Upgrade")
				w.WriteHeader(http.StatusSwitchingProtocols) // final: sent at the Hijack
				c, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					return err
				}
				defer c.Close()
				_, err = io.WriteString(c, "switched")
				return err
			})
			for _, code := range []int{99, 1000} {
				app.Get("/invalid/"+strconv.Itoa(code), func(w http.ResponseWriter, r *http.Request) error {
					w.WriteHeader(code)
					return nil
				})
			}
			base, _ := webtest.Serve(t, app)

			for path, want := range map[string]string{
				"/after-final":              "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
				"/framed/Content-Length":    "HTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 200 OK\r\n",
				"/framed/Transfer-Encoding": "HTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 200 OK\r\n",
				"/hijacked":                 "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
				"/switch":                   "HTTP/1.1 101 Switching Protocols\r\n",
				"/invalid/99":               "HTTP/1.1 500 Internal Server Error\r\n",
				"/invalid/1000":             "HTTP/1.1 500 Internal Server Error\r\n",
			} {
				got := rawHead(t, base, "GET "+path+" HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
				if !strings.HasPrefix(got, want) || path == "/after-final" && got != want || path == "/hijacked" && got != want ||
					path == "/switch" && !strings.HasSuffix(got, "\r\n\r\nswitched") || strings.HasPrefix(path, "/framed/") && !strings.Contains(got, "\r\n\r\n4\r\nbody") && !strings.HasSuffix(got, "\r\n\r\nbody") {
					t.Errorf("GET %s: %q; want it to begin with %q", path, got, want)
				}
			}

			got := rawHead(t, base, "GET /hints HTTP/1.1\r\nHost: a\r\n\r\nGET /late HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
			br := bufio.NewReader(strings.NewReader(got))
			tp := textproto.NewReader(br)
			line, err := tp.ReadLine()
			if err != nil || line != "HTTP/1.1 103 Early Hints" {
				t.Fatalf("first line %q (%v) in %q; want HTTP/1.1 103 Early Hints", line, err, got)
			}
			hints, err := tp.ReadMIMEHeader()
			if err != nil || hints.Get("Link") != "</style.css>; rel=preload; as=style" || hints.Get("Content-Length") != "" || hints.Get("Transfer-Encoding") != "" {
				t.Errorf("the 103's fields %v (%v); want the Link set before it and no framing", hints, err)
			}
			for _, want := range []struct{ body, typ string }{{"<p>page</p>", "text/html"}, {"body", "text/plain; charset=utf-8"}} {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("the final responses after the 103: %v in %q", err, got)
				}
				b, err := io.ReadAll(resp.Body)
				if err != nil || resp.StatusCode != 200 || string(b) != want.body || resp.Header.Get("Content-Type") != want.typ {
					t.Errorf("final response %d %q %q (%v); want 200 %q %q, with no 1xx in the body", resp.StatusCode, resp.Header.Get("Content-Type"), b, err, want.typ, want.body)
				}
			}
			if rest, _ := io.ReadAll(br); len(rest) != 0 {
				t.Errorf("after the two responses: %q; want nothing (a 103 after the body is not sent)", rest)
			}

			var got1xx []int
			trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
				got1xx = append(got1xx, code)
				return nil
			}}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, base+"/hints", nil)
			if status, b := body(t)(client(t).Do(req)); status != 200 || b != "<p>page</p>" || len(got1xx) != 1 || got1xx[0] != 103 {
				t.Errorf("net/http's client: %d %q, 1xx %v; want 200 after one 103", status, b, got1xx)
			}

			if eng.name == "nbio" {
				got := rawHead(t, base, "GET /hints HTTP/1.0\r\n\r\n")
				if !strings.HasPrefix(got, "HTTP/1.0 200 OK\r\n") || !strings.HasSuffix(got, "\r\n\r\n<p>page</p>") {
					t.Errorf("GET /hints in HTTP/1.0: %q; want the final response alone", got)
				}
			}
		})
	}
}

// TestBodilessStatusesHaveNoFraming: a 204 and a 304, to GET and to HEAD,
// flushed or not, go without Content-Length and Transfer-Encoding (RFC 9110
// §8.6), a 304 without Content-Type, whatever the handler set, as net/http
// sends them; the next response on the connection follows at once.
func TestBodilessStatusesHaveNoFraming(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			for _, status := range []int{http.StatusNoContent, http.StatusNotModified} {
				for _, flush := range []bool{false, true} {
					path := "/" + strconv.Itoa(status)
					if flush {
						path += "/flushed"
					}
					app.Get(path, func(w http.ResponseWriter, r *http.Request) error {
						w.Header().Set("Content-Type", "application/json")
						w.Header().Set("Transfer-Encoding", "chunked")
						w.Header().Set("X-Kept", "yes")
						w.Header().Set("Trailer", "X-Sum") // no body, so no trailer and no chunks
						w.WriteHeader(status)
						if flush {
							http.NewResponseController(w).Flush()
						}
						return nil
					})
				}
			}
			app.Get("/next", func(w http.ResponseWriter, r *http.Request) error {
				_, err := io.WriteString(w, "next")
				return err
			})
			base, _ := webtest.Serve(t, app)
			for _, path := range []string{"/204", "/204/flushed", "/304", "/304/flushed"} {
				status := map[bool]string{true: "204 No Content", false: "304 Not Modified"}[strings.HasPrefix(path, "/204")]
				for _, method := range []string{"GET", "HEAD"} {
					got := rawHead(t, base, method+" "+path+" HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
					head, rest, _ := strings.Cut(got, "\r\n\r\n")
					typed := strings.Contains(head, "Content-Type:")
					if !strings.HasPrefix(head, "HTTP/1.1 "+status+"\r\n") || strings.Contains(head, "Content-Length") || strings.Contains(head, "Transfer-Encoding") ||
						typed != strings.HasPrefix(status, "204") || !strings.Contains(head, "X-Kept: yes") ||
						!strings.HasPrefix(rest, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(rest, "\r\n\r\nnext") {
						t.Errorf("%s %s: %q; want %s without Content-Length or Transfer-Encoding, Content-Type only on a 204, then the next response", method, path, got, status)
					}
				}
			}
		})
	}
}

// TestFieldsCannotSplitTheResponse: CR and LF in a value a handler set
// become spaces, and a field whose name is not a token is not sent, on
// every path a head takes (written by the engine, by nbio's writer for a
// large or flushed body, a trailer, a 204, a 103, HEAD), as net/http
// writes fields: a value taken from a request cannot start a response of
// its own.
func TestFieldsCannotSplitTheResponse(t *testing.T) {
	const evil = "a\r\nSet-Cookie: stolen=1\r\n\r\nHTTP/1.1 200 OK"
	large := strings.Repeat("l", 5000)
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			set := func(w http.ResponseWriter) {
				w.Header().Set("X-Echo", evil)
				w.Header()["Bad Name"] = []string{"x"}
				w.Header()["X-Bad\r\nSet-Cookie"] = []string{"stolen=2"}
			}
			app.Get("/small", func(w http.ResponseWriter, r *http.Request) error {
				set(w)
				_, err := io.WriteString(w, "small")
				return err
			})
			app.Get("/large", func(w http.ResponseWriter, r *http.Request) error {
				set(w)
				_, err := io.WriteString(w, large)
				return err
			})
			app.Get("/flushed", func(w http.ResponseWriter, r *http.Request) error {
				set(w)
				_, _ = io.WriteString(w, "flushed")
				http.NewResponseController(w).Flush()
				return nil
			})
			app.Get("/trailer", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Trailer", "X-Echo")
				_, err := io.WriteString(w, "t")
				w.Header().Set("X-Echo", evil)
				return err
			})
			app.Get("/nocontent", func(w http.ResponseWriter, r *http.Request) error {
				set(w)
				w.WriteHeader(http.StatusNoContent)
				return nil
			})
			app.Get("/hints", func(w http.ResponseWriter, r *http.Request) error {
				set(w)
				w.WriteHeader(http.StatusEarlyHints)
				w.Header().Del("X-Echo")
				return nil
			})
			base, _ := webtest.Serve(t, app)
			for _, req := range []string{"GET /small", "GET /large", "GET /flushed", "GET /trailer", "GET /nocontent", "GET /hints", "HEAD /small", "HEAD /large"} {
				got := rawHead(t, base, req+" HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
				if strings.Contains(got, "\r\nSet-Cookie") || strings.Contains(got, "Bad Name") || strings.Count("\r\n"+got, "\r\nHTTP/1.1 ") != map[bool]int{true: 2, false: 1}[req == "GET /hints"] {
					t.Errorf("%s: %q; want no field but the handler's X-Echo, and no response but its own", req, got)
				}
				if !strings.Contains(got, "X-Echo: a  Set-Cookie: stolen=1    HTTP/1.1 200 OK\r\n") {
					t.Errorf("%s: %q; want X-Echo with its CR and LF as spaces", req, got)
				}
			}
		})
	}
}

// TestSmallResponseFieldsSentOnce: the fields the engine adds to a small
// response (Content-Length, Content-Type, Connection: close) are not added
// again where the handler set them; a status without a name goes out with
// net/http's.
func TestSmallResponseFieldsSentOnce(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			app := newApp(t, eng.engine)
			app.Get("/declared", func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Length", "5")
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Connection", "close")
				_, err := io.WriteString(w, "small")
				return err
			})
			app.Get("/unnamed", func(w http.ResponseWriter, r *http.Request) error {
				w.WriteHeader(299)
				_, err := io.WriteString(w, "small")
				return err
			})
			base, _ := webtest.Serve(t, app)
			got := rawHead(t, base, "GET /declared HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
			for _, field := range []string{"Content-Length: 5", "Content-Type: application/json", "Connection: close"} {
				name, _, _ := strings.Cut(field, ":")
				if strings.Count(got, name+":") != 1 || !strings.Contains(got, "\r\n"+field+"\r\n") || !strings.HasSuffix(got, "\r\n\r\nsmall") {
					t.Errorf("GET /declared: %q; want one %s, then the body", got, field)
				}
			}
			got = rawHead(t, base, "GET /unnamed HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
			if !strings.HasPrefix(got, "HTTP/1.1 299 status code 299\r\n") || !strings.HasSuffix(got, "\r\n\r\nsmall") {
				t.Errorf("GET /unnamed: %q; want HTTP/1.1 299 status code 299, then the body", got)
			}
		})
	}
}
