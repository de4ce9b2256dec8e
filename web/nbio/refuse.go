package nbio

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/nbhttp"
)

// refusal is the status net/http and the App answer a request with that
// nbio's parser refused with err while the request was in phase p: 413 for
// a body over the App's largest BodyLimit, 501 for a transfer coding it
// does not know, 400 otherwise.
func refusal(err error, p phase) (status int, why string) {
	switch {
	case errors.Is(err, nbhttp.ErrTooLong) && p != phaseHeaders:
		return 413, ""
	case errors.Is(err, nbhttp.ErrTooLong):
		return 431, ""
	case strings.Contains(err.Error(), "unsupported transfer encoding"):
		return 501, "Unsupported transfer encoding"
	}
	return 400, ""
}

// refuse answers a request the engine refuses before the App sees it, as
// net/http would; the caller closes the connection (nbio would close it
// without a word). It writes to c directly, not through the connection's
// state, whose writes may wait: this runs on the poller.
func refuse(c *nbio.Conn, status int, why string) {
	line := strconv.Itoa(status) + " " + http.StatusText(status)
	body := line
	switch {
	case status == 501:
		body = why
	case why != "":
		body = line + ": " + why
	}
	_, _ = io.WriteString(c, "HTTP/1.1 "+line+errorHeaders+body)
}

// errorHeaders are those of net/http's answer to a request it cannot parse.
const errorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// badRequest is the status line and body net/http sends for a request it
// refuses before routing, with why.
func badRequest(w http.ResponseWriter, r *http.Request, why string) {
	r.Close = true
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Connection", "close")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, "400 Bad Request: "+why)
}

// validHeaders reports what net/http would refuse in r's header that nbio's
// parser lets through: an HTTP/1.1 request without Host, or Content-Length
// headers that disagree. (Header names with a space in them are refused by
// the engine's own scan, before nbio's parser cuts them at the space.)
func validHeaders(r *http.Request) string {
	if r.ProtoAtLeast(1, 1) && r.Host == "" && len(r.Header["Host"]) == 0 {
		return "missing required Host header"
	}
	if cl := r.Header["Content-Length"]; len(cl) > 1 {
		for _, v := range cl[1:] {
			if strings.TrimSpace(v) != strings.TrimSpace(cl[0]) {
				return "multiple Content-Length headers"
			}
		}
	}
	return ""
}
