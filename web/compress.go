package web

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// MinCompressSize is the smallest response body Compress compresses; below
// it the encoding overhead outweighs the saving.
const MinCompressSize = 1024

// Compress is a decorator that compresses responses with gzip, or deflate
// when the client accepts only that, as chosen by Accept-Encoding (q=0
// refuses an encoding, and so does a q-value that is not a number from 0
// to 1, NaN included). It leaves alone bodies under MinCompressSize,
// responses that already have a Content-Encoding, already-compressed media
// (images, video, archives, …), range responses, and responses without a
// body; it always sets Vary: Accept-Encoding. Use it
// per route (web.WithDecorators(web.Compress)), per group or for the whole App.
// Encoders are pooled; it is safe for concurrent use.
func Compress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		enc := negotiate(r.Header.Get("Accept-Encoding"))
		if enc == "" || r.Method == http.MethodHead || r.Header.Get("Range") != "" {
			next.ServeHTTP(w, r)
			return
		}
		cw := compressWriterPool.Get().(*compressWriter)
		cw.ResponseWriter, cw.encoding = w, enc
		defer func() {
			cw.close()
			*cw = compressWriter{buf: cw.buf[:0]} // keep the buffer's capacity
			compressWriterPool.Put(cw)
		}()
		next.ServeHTTP(cw, r)
	})
}

// negotiate picks "gzip", "deflate" or "" from an Accept-Encoding header.
func negotiate(header string) string {
	gz, deflate := -1.0, -1.0
	star := -1.0
	for rest := header; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			q = qvalue(v)
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "gzip", "x-gzip":
			gz = q
		case "deflate":
			deflate = q
		case "*":
			star = q
		}
	}
	if gz < 0 {
		gz = star
	}
	if deflate < 0 {
		deflate = star
	}
	switch {
	case gz > 0 && gz >= deflate:
		return "gzip"
	case deflate > 0:
		return "deflate"
	}
	return ""
}

// qvalue reads the weight after "q=". RFC 9110 allows 0 to 1; anything
// else ("abc", "NaN", "Inf", "-1", "2") counts as 0 and so refuses the
// encoding: compression is optional, and a weight that does not parse is
// no clear consent to it. Left as NaN, a weight would also make every
// comparison in negotiate false, so that one bad entry could veto a good one.
func qvalue(s string) float64 {
	q, err := strconv.ParseFloat(s, 64)
	if err != nil || !(q >= 0 && q <= 1) { // NaN fails both comparisons
		return 0
	}
	return q
}

var (
	gzipPool           sync.Pool
	flatePool          sync.Pool
	compressWriterPool = sync.Pool{New: func() any { return new(compressWriter) }}
)

// compressWriter buffers the first MinCompressSize bytes to decide whether
// compressing is worth it, then either compresses or passes through.
type compressWriter struct {
	http.ResponseWriter
	encoding string
	status   int
	buf      []byte
	encoder  io.WriteCloser // nil until compressing
	decided  bool
}

func (w *compressWriter) WriteHeader(status int) {
	if status < 200 || w.decided || w.status != 0 {
		w.ResponseWriter.WriteHeader(status) // informational, or after the decision
		return
	}
	w.status = status
	if status == http.StatusNoContent || status == http.StatusNotModified || status == http.StatusPartialContent {
		w.passThrough()
	}
}

func (w *compressWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.decided {
		if len(w.buf)+len(p) < MinCompressSize {
			w.buf = append(w.buf, p...)
			return len(p), nil
		}
		if err := w.decide(true); err != nil {
			return 0, err
		}
	}
	if w.encoder != nil {
		return w.encoder.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// decide commits to compressing (when big is true and the response allows
// it) or not, sends the header and flushes the buffer.
func (w *compressWriter) decide(big bool) error {
	w.decided = true
	h := w.ResponseWriter.Header()
	if !big || h.Get("Content-Encoding") != "" {
		return w.flushPlain()
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", http.DetectContentType(w.buf))
	}
	if compressed(h.Get("Content-Type")) {
		return w.flushPlain()
	}
	h.Set("Content-Encoding", w.encoding)
	h.Del("Content-Length")
	h.Del("Accept-Ranges")
	if etag := h.Get("ETag"); etag != "" && !strings.HasPrefix(etag, "W/") {
		h.Set("ETag", "W/"+etag) // the compressed bytes differ from the strong one
	}
	w.ResponseWriter.WriteHeader(w.status)
	w.encoder = w.newEncoder()
	if len(w.buf) > 0 {
		if _, err := w.encoder.Write(w.buf); err != nil {
			return err
		}
	}
	w.buf = w.buf[:0]
	return nil
}

// compressed reports whether a content type is already compressed, so that
// gzip would spend CPU to make it larger.
func compressed(contentType string) bool {
	for _, prefix := range []string{"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif",
		"video/", "audio/", "font/woff", "application/zip", "application/gzip", "application/x-gzip",
		"application/zstd", "application/x-7z-compressed", "application/pdf"} {
		if strings.HasPrefix(contentType, prefix) {
			return true
		}
	}
	return false
}

func (w *compressWriter) passThrough() {
	w.decided = true
	_ = w.flushPlain()
}

func (w *compressWriter) flushPlain() error {
	w.decided = true
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.ResponseWriter.WriteHeader(w.status)
	if len(w.buf) > 0 {
		_, err := w.ResponseWriter.Write(w.buf)
		w.buf = w.buf[:0]
		return err
	}
	return nil
}

func (w *compressWriter) newEncoder() io.WriteCloser {
	if w.encoding == "gzip" {
		if z, ok := gzipPool.Get().(*gzip.Writer); ok {
			z.Reset(w.ResponseWriter)
			return z
		}
		return gzip.NewWriter(w.ResponseWriter)
	}
	if z, ok := flatePool.Get().(*flate.Writer); ok {
		z.Reset(w.ResponseWriter)
		return z
	}
	z, _ := flate.NewWriter(w.ResponseWriter, flate.DefaultCompression) // the level is valid
	return z
}

// close finishes the response: it flushes a small buffered body as is, or
// ends the compressed stream and returns the encoder to its pool.
func (w *compressWriter) close() {
	if !w.decided {
		if w.status == 0 && len(w.buf) == 0 {
			return // the handler wrote nothing: leave the response to the caller
		}
		_ = w.flushPlain()
		return
	}
	if w.encoder == nil {
		return
	}
	_ = w.encoder.Close()
	switch z := w.encoder.(type) {
	case *gzip.Writer:
		z.Reset(io.Discard)
		gzipPool.Put(z)
	case *flate.Writer:
		z.Reset(io.Discard)
		flatePool.Put(z)
	}
	w.encoder = nil
}

// Flush sends what is buffered. A response flushed before Compress decided
// is sent as is: Write decides as soon as MinCompressSize bytes arrive, so
// less than that is buffered here.
func (w *compressWriter) Flush() {
	if !w.decided {
		_ = w.decide(false)
	}
	if f, ok := w.encoder.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack lets WebSocket upgrades pass through a compressed route.
func (w *compressWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.decided = true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *compressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
