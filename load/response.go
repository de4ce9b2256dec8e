package load

import (
	"bufio"
	"errors"
	"io"
)

// The parser reads only what a load generator needs from a response: the
// status code, how the body is framed, and whether the server will close the
// connection. It works on bufio.Reader's own buffer (ReadSlice, Discard), so a
// response costs no allocation.

var (
	errStatusLine    = errors.New("malformed status line")
	errHeaderLine    = errors.New("malformed header line")
	errLineTooLong   = errors.New("response line too long")
	errContentLength = errors.New("malformed content-length")
	errChunk         = errors.New("malformed chunk")
)

// responseHead is what the parser keeps of a response head.
type responseHead struct {
	status  int
	length  int64 // Content-Length; -1 when absent
	chunked bool  // Transfer-Encoding ends in chunked
	close   bool  // the server closes the connection after this response
	toClose bool  // no framing: the body lasts until the connection closes
}

// readLine returns the next line without its CRLF or LF. The slice points
// into br's buffer and is valid until the next read. A line longer than the
// buffer gives errLineTooLong with the line's start (see skipLine).
func readLine(br *bufio.Reader) (line []byte, n int, err error) {
	line, err = br.ReadSlice('\n')
	n = len(line)
	switch {
	case err == bufio.ErrBufferFull:
		return line, n, errLineTooLong
	case err == io.EOF && n > 0:
		return nil, n, io.ErrUnexpectedEOF
	case err != nil:
		return nil, n, err
	}
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, n, nil
}

// readHead parses a status line and header block into h, skipping 1xx
// informational responses. It returns the bytes consumed.
func readHead(br *bufio.Reader, h *responseHead) (int64, error) {
	var total int64
	for {
		n, err := readOneHead(br, h)
		total += n
		if err != nil {
			return total, err
		}
		if h.status >= 200 || h.status == 101 {
			return total, nil
		}
	}
}

func readOneHead(br *bufio.Reader, h *responseHead) (int64, error) {
	*h = responseHead{length: -1}
	line, n, err := readLine(br)
	total := int64(n)
	if err != nil {
		return total, err
	}
	minor, status, ok := parseStatusLine(line)
	if !ok {
		return total, errStatusLine
	}
	h.status = status
	keepAlive := minor >= 1 // HTTP/1.0 closes unless told otherwise
	for {
		line, n, err := readLine(br)
		total += int64(n)
		tooLong := err == errLineTooLong
		if err != nil && !tooLong {
			return total, unexpected(err)
		}
		if len(line) == 0 {
			break
		}
		colon := indexByte(line, ':')
		if colon <= 0 || line[0] == ' ' || line[0] == '\t' || !isToken(line[:colon]) {
			return total, errHeaderLine
		}
		name, value := line[:colon], trimSpace(line[colon+1:])
		if tooLong {
			// A header longer than the buffer (a big cookie, say) is fine as
			// long as it is none of the few this parser reads.
			if equalFold(name, "content-length") || equalFold(name, "transfer-encoding") || equalFold(name, "connection") {
				return total, errLineTooLong
			}
			m, err := skipLine(br)
			total += m
			if err != nil {
				return total, err
			}
			continue
		}
		switch {
		case equalFold(name, "content-length"):
			v, ok := parseDecimal(value)
			if !ok || (h.length >= 0 && h.length != v) {
				return total, errContentLength
			}
			h.length = v
		case equalFold(name, "transfer-encoding") && minor >= 1: // HTTP/1.0 has no transfer codings
			h.chunked = lastTokenIs(value, "chunked")
			if !h.chunked {
				h.toClose = true
			}
		case equalFold(name, "connection"):
			if hasToken(value, "close") {
				h.close = true
			}
			if hasToken(value, "keep-alive") {
				keepAlive = true
			}
		}
	}
	if !keepAlive {
		h.close = true
	}
	if h.chunked || h.toClose {
		h.length = -1
	}
	if !h.chunked && h.length < 0 && !noBody(h.status) {
		h.toClose = true
	}
	if h.toClose {
		h.close = true
	}
	return total, nil
}

// skipLine consumes the rest of a line that did not fit the buffer.
func skipLine(br *bufio.Reader) (int64, error) {
	var total int64
	for {
		line, err := br.ReadSlice('\n')
		total += int64(len(line))
		switch err {
		case nil:
			return total, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return total, unexpected(err)
		}
	}
}

// noBody reports whether a response with this status never has a body.
func noBody(status int) bool {
	return status < 200 || status == 204 || status == 304
}

// parseStatusLine parses "HTTP/1.x SSS reason".
func parseStatusLine(line []byte) (minor, status int, ok bool) {
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' {
		return 0, 0, false
	}
	if line[7] < '0' || line[7] > '9' {
		return 0, 0, false
	}
	minor = int(line[7] - '0')
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 || (len(line) > 12 && line[12] != ' ') {
		return 0, 0, false
	}
	return minor, status, true
}

// readBody consumes the body h describes. With keep non-nil it appends the
// body to *keep; otherwise it discards it. It returns the bytes consumed.
func readBody(br *bufio.Reader, h *responseHead, head bool, keep *[]byte) (int64, error) {
	switch {
	case head || noBody(h.status):
		return 0, nil
	case h.chunked:
		return readChunked(br, keep)
	case h.length >= 0:
		return consume(br, h.length, keep)
	default:
		return consumeToEOF(br, keep)
	}
}

// consume reads exactly n bytes.
func consume(br *bufio.Reader, n int64, keep *[]byte) (int64, error) {
	var done int64
	for done < n {
		step := n - done
		if step > int64(br.Size()) {
			step = int64(br.Size())
		}
		if keep == nil {
			m, err := br.Discard(int(step))
			done += int64(m)
			if err != nil {
				return done, unexpected(err)
			}
			continue
		}
		p, err := br.Peek(int(step))
		*keep = append(*keep, p...)
		m, _ := br.Discard(len(p))
		done += int64(m)
		if err != nil {
			return done, unexpected(err)
		}
	}
	return done, nil
}

// consumeToEOF reads until the server closes the connection.
func consumeToEOF(br *bufio.Reader, keep *[]byte) (int64, error) {
	var done int64
	for {
		p, err := br.Peek(1)
		if len(p) == 0 {
			if err == io.EOF {
				return done, nil
			}
			return done, err
		}
		p, _ = br.Peek(br.Buffered())
		if keep != nil {
			*keep = append(*keep, p...)
		}
		m, _ := br.Discard(len(p))
		done += int64(m)
	}
}

// readChunked reads a chunked body and its trailer.
func readChunked(br *bufio.Reader, keep *[]byte) (int64, error) {
	var total int64
	for {
		line, n, err := readLine(br)
		total += int64(n)
		if err != nil {
			return total, unexpected(err)
		}
		size, ok := parseChunkSize(line)
		if !ok {
			return total, errChunk
		}
		if size == 0 {
			break
		}
		m, err := consume(br, size, keep)
		total += m
		if err != nil {
			return total, err
		}
		line, n, err = readLine(br)
		total += int64(n)
		if err != nil {
			return total, unexpected(err)
		}
		if len(line) != 0 {
			return total, errChunk
		}
	}
	for { // trailer fields, up to an empty line
		line, n, err := readLine(br)
		total += int64(n)
		if err == errLineTooLong {
			m, err := skipLine(br)
			total += m
			if err != nil {
				return total, err
			}
			continue
		}
		if err != nil {
			return total, unexpected(err)
		}
		if len(line) == 0 {
			return total, nil
		}
	}
}

// parseChunkSize parses a hexadecimal chunk size, ignoring extensions.
func parseChunkSize(line []byte) (int64, bool) {
	if i := indexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = trimSpace(line)
	if len(line) == 0 || len(line) > 15 { // 15 hex digits cannot overflow int64
		return 0, false
	}
	var v int64
	for _, c := range line {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | int64(d)
	}
	return v, true
}

// parseDecimal parses a non-negative decimal that fits int64 comfortably.
func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold reports whether b equals the lower-case ASCII string s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// hasToken reports whether the comma-separated list v holds token (lower case).
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		i := indexByte(v, ',')
		var part []byte
		if i < 0 {
			part, v = v, nil
		} else {
			part, v = v[:i], v[i+1:]
		}
		if equalFold(trimSpace(part), token) {
			return true
		}
	}
	return false
}

// lastTokenIs reports whether the last element of the comma-separated list v is token.
func lastTokenIs(v []byte, token string) bool {
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] == ',' {
			v = v[i+1:]
			break
		}
	}
	return equalFold(trimSpace(v), token)
}

// isToken reports whether b is a valid header field name.
func isToken(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || c == '(' || c == ')' || c == ',' || c == '/' || c == ':' ||
			c == ';' || c == '<' || c == '=' || c == '>' || c == '?' || c == '@' ||
			c == '[' || c == '\\' || c == ']' || c == '{' || c == '}' || c == '"' {
			return false
		}
	}
	return len(b) > 0
}
