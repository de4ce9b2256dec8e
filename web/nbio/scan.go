package nbio

import "bytes"

// headerScan is where a scan of a request's line and headers has got to.
// The engine scans them itself, a read at a time, before nbio's parser
// sees them: to count their bytes exactly against MaxHeaderBytes, and to
// refuse what net/http refuses and nbio's parser lets through (a header
// name with a space in it, which nbio cuts at the space).
type headerScan uint8

const (
	inRequestLine  headerScan = iota // the first line
	atHeadersStart                   // after the first line's LF
	atLineStart                      // after a header line's LF
	afterCR                          // after a CR that begins a line
	inName                           // in a header's name
	inValue                          // after a header's colon
)

// spacedName is what feed says of a header name with a space in it, which
// net/http refuses only after the version and Host; the scan can go on
// after it.
const spacedName = "a space in a header name"

// feed scans data, the next bytes of the request line and headers. It
// returns how many of them belong to the line and headers (all of data
// unless they end in it), whether they ended — with an empty line, CRLF or
// a bare LF as net/http accepts — and, if they are malformed, why; the scan
// stops there.
func (s *headerScan) feed(data []byte) (n int, end bool, bad string) {
	i := 0
	for i < len(data) {
		switch *s {
		case inRequestLine, inValue:
			j := bytes.IndexByte(data[i:], '\n')
			if j < 0 {
				return len(data), false, ""
			}
			i += j + 1
			if *s == inRequestLine {
				*s = atHeadersStart
			} else {
				*s = atLineStart
			}
		case atHeadersStart, atLineStart:
			c := data[i]
			i++
			switch c {
			case '\r':
				*s = afterCR
			case '\n':
				return i, true, ""
			case ' ', '\t':
				// A continuation line (obsolete line folding): net/http
				// joins it to the line before, nbio's parser reads it as a
				// field of its own; the engine refuses it (RFC 9112 §5.2).
				return i, false, "obsolete line folding"
			case ':':
				return i, false, "invalid header name"
			default:
				*s = inName
			}
		case afterCR:
			i++
			if data[i-1] != '\n' {
				return i, false, "malformed header line"
			}
			return i, true, ""
		case inName:
			c := data[i]
			i++
			switch c {
			case ':':
				*s = inValue
			case ' ':
				return i, false, spacedName
			case '\t':
				return i, false, "malformed header line"
			case '\r', '\n':
				return i, false, "malformed header line"
			}
		}
	}
	return len(data), false, ""
}
