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
	raw        []byte // request line, header and body
	addrIndex  int    // index of addr in runner.addrs
	head       bool   // HEAD: the response has no body
	replayable bool   // may go again on a new connection: see replayable
	addr       string // host:port to dial
	https      bool   // a TLS connection, to serverName
	serverName string
	name       string // "METHOD URL", for reports
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
	if u.Scheme != "http" && u.Scheme != "https" {
		return request{}, fmt.Errorf("%w: %q: scheme must be http or https", ErrBadTarget, t.URL)
	}
	if u.Host == "" {
		return request{}, fmt.Errorf("%w: %q: no host", ErrBadTarget, t.URL)
	}
	port := u.Port()
	switch {
	case port != "":
	case u.Scheme == "https":
		port = "443"
	default:
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
		raw:        []byte(b.String()),
		head:       method == http.MethodHead,
		replayable: replayable(method, t.Header),
		addr:       net.JoinHostPort(u.Hostname(), port),
		https:      u.Scheme == "https",
		serverName: u.Hostname(),
		name:       method + " " + t.URL,
	}, nil
}

// replayable reports whether a request may be sent a second time when a
// reused keep-alive connection closed after it was written but before any
// byte of its response arrived. The server may then have processed it, or
// not (it closed the idle connection just as the request arrived, the
// common case); only a request whose repetition is harmless may go again.
//
// The set is net/http's Transport's, narrower than RFC 9110 §9.2.2: the safe
// methods GET, HEAD, OPTIONS and TRACE, and any request carrying an
// Idempotency-Key or X-Idempotency-Key header. PUT and DELETE are idempotent
// by the RFC, which lets a client retry them (MAY), but in a benchmark the
// server still does the work twice while one request is counted, and a
// repeated DELETE usually answers 404 where the first answered 204: the
// run would report an unexpected status for a request the server served.
// A target that wants PUT or DELETE (or POST) re-sent says so with the
// header, as it would to net/http.
func replayable(method string, header http.Header) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	for name, values := range header {
		// Any case: Target.Header may hold names that are not canonical,
		// and they are written as they are. A name without values is not
		// written at all.
		if len(values) > 0 && (strings.EqualFold(name, "Idempotency-Key") || strings.EqualFold(name, "X-Idempotency-Key")) {
			return true
		}
	}
	return false
}
