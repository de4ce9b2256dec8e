package load

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// ErrBadTarget reports a target that cannot be sent: a bad URL, scheme or
// method.
var ErrBadTarget = errors.New("bad target")

// request is a target turned into the exact bytes written on the wire.
type request struct {
	raw       []byte // request line, header and body
	addrIndex int    // index of addr in runner.addrs
	head      bool   // HEAD: the response has no body
	addr      string // host:port to dial
	name      string // "METHOD URL", for reports
}

// buildRequest renders t once, so that sending it is a single Write.
func buildRequest(t Target) (request, error) {
	method := t.Method
	if method == "" {
		method = http.MethodGet
	}
	if !isToken([]byte(method)) {
		return request{}, fmt.Errorf("%w: method %q", ErrBadTarget, method)
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return request{}, fmt.Errorf("%w: %w", ErrBadTarget, err)
	}
	if u.Scheme != "http" {
		return request{}, fmt.Errorf("%w: %q: scheme must be http", ErrBadTarget, t.URL)
	}
	if u.Host == "" {
		return request{}, fmt.Errorf("%w: %q: no host", ErrBadTarget, t.URL)
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, u.RequestURI())
	has := func(name string) bool { return t.Header.Get(name) != "" }
	if !has("Host") {
		fmt.Fprintf(&b, "Host: %s\r\n", u.Host)
	}
	if !has("User-Agent") {
		b.WriteString("User-Agent: loom-load\r\n")
	}
	names := make([]string, 0, len(t.Header))
	for name := range t.Header {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !isToken([]byte(name)) {
			return request{}, fmt.Errorf("%w: header name %q", ErrBadTarget, name)
		}
		for _, v := range t.Header[name] {
			if strings.ContainsAny(v, "\r\n") {
				return request{}, fmt.Errorf("%w: header %s: value holds a line break", ErrBadTarget, name)
			}
			fmt.Fprintf(&b, "%s: %s\r\n", name, v)
		}
	}
	if t.Body != nil || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		if !has("Content-Length") {
			fmt.Fprintf(&b, "Content-Length: %s\r\n", strconv.Itoa(len(t.Body)))
		}
	}
	b.WriteString("\r\n")
	b.Write(t.Body)
	return request{
		raw:  []byte(b.String()),
		head: method == http.MethodHead,
		addr: net.JoinHostPort(u.Hostname(), port),
		name: method + " " + t.URL,
	}, nil
}
