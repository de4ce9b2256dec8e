package nbio

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/lesismal/nbio/nbhttp"
)

// refusalStatus is the status net/http and the App answer a request with
// that nbio's parser refused with err while the request was in phase p:
// 413 for a body over the App's largest WithBodyLimit, 501 for a transfer
// coding it does not know, 400 otherwise.
func refusalStatus(err error, p phase) (status int, why string) {
	switch {
	case errors.Is(err, nbhttp.ErrTooLong) && p != phaseHeaders:
		return 413, ""
	case errors.Is(err, nbhttp.ErrTooLong):
		return 431, ""
	case strings.Contains(err.Error(), "unsupported transfer encoding"),
		strings.Contains(err.Error(), "too many transfer encodings"):
		return 501, "Unsupported transfer encoding"
	}
	return 400, ""
}

// refusal is the answer net/http gives a request it refuses before the App
// sees it, with status and why.
func refusal(status int, why string) []byte {
	line := strconv.Itoa(status) + " " + http.StatusText(status)
	body := line
	switch {
	case status == 501:
		body = why
	case why != "":
		body = line + ": " + why
	}
	return []byte("HTTP/1.1 " + line + errorHeaders + body)
}

// errorHeaders are those of net/http's answer to a request it cannot parse.
const errorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// asNetHTTP makes r what net/http hands a handler: Host only in r.Host
// (the target's host for an absolute-form target, RFC 9112 §3.2.2), r.URL
// without a host for an origin-form target, no framing fields (and no
// Trailer) in the header of a chunked request, one of equal Content-Length
// fields, and a length of 0 for a request without a body. It
// reports whether r had both Content-Length and Transfer-Encoding, after
// which the connection must close.
func asNetHTTP(r *http.Request) (closeAfter bool) {
	h := r.Header
	delete(h, "Host")
	// nbio gives a target without a host the Host field's, in r.Host too,
	// and leaves r.Host empty for a target with one.
	if r.Host != "" {
		r.URL.Host = ""
	} else {
		r.Host = r.URL.Host
	}
	switch {
	case len(r.TransferEncoding) > 0:
		closeAfter = h["Content-Length"] != nil
		delete(h, "Content-Length")
		delete(h, "Transfer-Encoding")
		delete(h, "Trailer")
		r.TransferEncoding = []string{"chunked"}
	case r.ContentLength < 0:
		r.ContentLength = 0
	case len(h["Content-Length"]) > 1:
		h["Content-Length"] = h["Content-Length"][:1] // equal, or refused
	}
	return closeAfter
}
