package nbio

import "strings"

// The engine checks what RFC 9110 and RFC 9112 require a server to refuse
// and nbio's parser lets through, and takes what they require a server to
// accept and nbio's parser refuses, the way net/http does: the request line
// here, before the parser sees it, and each field line as the parser hands
// it over (processor.OnHeader). docs/web.md lists what still differs.

// byteClass is a table of which bytes belong to a class.
type byteClass [256]bool

func newByteClass(ranges ...string) *byteClass {
	var c byteClass
	for _, r := range ranges {
		for i := 0; i < len(r); i++ {
			c[r[i]] = true
		}
	}
	return &c
}

const (
	alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

var (
	// tchar (RFC 9110 §5.6.2): a method is a token.
	tokenBytes = newByteClass(alnum, "!#$%&'*+-.^_`|~")
	// The bytes of a Host (RFC 3986 §3.2.2, §3.2.3: reg-name, IP literals
	// and a port), as net/http takes them.
	hostBytes = newByteClass(alnum, "-._~%!$&'()*+,;=:[]")
)

// nbioMethods are the methods nbio's parser takes as they are; it refuses
// others, and takes these in lower case too, upper-casing them.
var nbioMethods = map[string]bool{
	"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true,
	"OPTIONS": true, "TRACE": true, "CONNECT": true, "PATCH": true,
}

// requestLine is a request line split as RFC 9112 §3 says: method SP
// request-target SP HTTP-version, single spaces, the version exactly
// "HTTP/" DIGIT "." DIGIT.
type requestLine struct {
	// method and target are views of the line being read: they hold only
	// while the parser is handed it.
	method, target []byte
	major, minor   int
}

// parseRequestLine splits line, without its line end. It returns the
// status to refuse it with, and why, or 0.
func parseRequestLine(line []byte) (rl requestLine, status int, why string) {
	sp := 0
	for sp < len(line) && tokenBytes[line[sp]] {
		sp++
	}
	if sp == 0 || sp == len(line) || line[sp] != ' ' {
		return rl, 400, "malformed request line"
	}
	rest := line[sp+1:]
	end := 0
	for end < len(rest) && rest[end] != ' ' {
		end++
	}
	version := rest[min(end+1, len(rest)):]
	if end == 0 || end == len(rest) || len(version) != len("HTTP/1.1") || string(version[:5]) != "HTTP/" ||
		!isDigit(version[5]) || version[6] != '.' || !isDigit(version[7]) {
		return rl, 400, "malformed request line"
	}
	rl.major, rl.minor = int(version[5]-'0'), int(version[7]-'0')
	rl.method, rl.target = line[:sp], rest[:end]
	return rl, 0, ""
}

// supported reports whether net/http serves a request of this version:
// HTTP/1.x, and the HTTP/2 connection preface, PRI * HTTP/2.0 (RFC 9113
// §3.4), which it hands to the handler.
func supported(method, target string, major, minor int) bool {
	return major == 1 || major == 2 && minor == 0 && method == "PRI" && target == "*"
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// nbioTakes reports whether nbio's parser reads the request line as it is:
// a method it knows, in upper case, and an origin-form or asterisk-form
// target. Otherwise the engine hands it a stand-in line and gives the
// processor the real method and target.
func (rl *requestLine) nbioTakes() bool {
	return nbioMethods[string(rl.method)] && (rl.target[0] == '/' || rl.target[0] == '*')
}

// trimOWS strips the optional whitespace around a field value (RFC 9110
// §5.5): spaces and tabs.
func trimOWS(v string) string {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// validFieldValue reports whether v holds only field-vchar, SP, HTAB and
// obs-text (RFC 9110 §5.5): no control byte (NUL, a bare CR) and no DEL.
// It tests eight bytes at a time and looks at the bytes one by one only in
// a word that may hold one (a tab does): the check runs on every field of
// every request.
func validFieldValue(v string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(v); i += 8 {
		w := uint64(v[i]) | uint64(v[i+1])<<8 | uint64(v[i+2])<<16 | uint64(v[i+3])<<24 |
			uint64(v[i+4])<<32 | uint64(v[i+5])<<40 | uint64(v[i+6])<<48 | uint64(v[i+7])<<56
		// A byte below 0x20 or equal to 0x7f sets its high bit here (and
		// maybe, by the borrow, one above it); obs-text bytes, whose high
		// bit is set, never do.
		below := (w - 0x20*ones) &^ w & highs
		del := ((w ^ 0x7f*ones) - ones) &^ (w ^ 0x7f*ones) & highs
		if below|del != 0 && !validFieldBytes(v[i:i+8]) {
			return false
		}
	}
	return validFieldBytes(v[i:])
}

func validFieldBytes(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// validHost reports whether v is a Host value net/http takes.
func validHost(v string) bool {
	for i := 0; i < len(v); i++ {
		if !hostBytes[v[i]] {
			return false
		}
	}
	return true
}

// validLength reports whether v is a Content-Length value: 1*DIGIT
// (RFC 9110 §8.6), less than 2^63.
func validLength(v string) bool {
	if v == "" {
		return false
	}
	const most = 1<<63 - 1
	var n uint64
	for i := 0; i < len(v); i++ {
		if !isDigit(v[i]) {
			return false
		}
		d := uint64(v[i] - '0')
		if n > (most-d)/10 {
			return false
		}
		n = n*10 + d
	}
	return true
}

// requestCheck is what the engine has checked of the request arriving on a
// connection, and what it found. The poller's.
type requestCheck struct {
	line         requestLine // the request line, when the engine read it
	lineRead     bool        // the engine has read and checked it
	standIn      bool        // the parser was handed a stand-in line
	method       string
	target       string
	major, minor int
	hosts        int    // Host fields
	hasLength    bool   // a Content-Length field
	length       string // its value
	hasExpect    bool   // an Expect field
	expect       string // the first one's value
	headersDone  bool   // the header section has ended
	// last: the connection closes after this request (RFC 9112 §6.1).
	last bool
	// The refusal: its status, 0 for none, why, and its rank: where
	// net/http finds it, which decides which of two it answers.
	status int
	why    string
	rank   rank
}

// rank orders refusals as net/http finds them: field lines it cannot read
// first, then (after nbio's parser's own: an unknown transfer coding, 501)
// the body's length, the version, Host, a space in a field name, Expect,
// and, last, in the handler,
// Transfer-Encoding in HTTP/1.0.
type rank uint8

const (
	rankFieldLine rank = iota + 1
	rankLength
	rankVersion
	rankHost
	rankFieldName
	rankExpect
	rankHTTP10
)

// refuse records a refusal, unless one that net/http would find first is
// recorded already.
func (r *requestCheck) refuse(k rank, status int, why string) {
	if r.status == 0 || k < r.rank {
		r.status, r.why, r.rank = status, why, k
	}
}

// headersEnd checks what the whole header section decides, as net/http
// does after reading it: Host (RFC 9112 §3.2), Transfer-Encoding in
// HTTP/1.0 and Content-Length beside it (§6.1), and Expect (RFC 9110
// §10.1.1). It reports whether to send 100 (Continue) now: length is the
// body's declared length, -1 for none or chunked.
func (r *requestCheck) headersEnd(chunked bool, length int) (sendContinue bool) {
	http11 := r.major == 1 && r.minor >= 1
	switch {
	case http11 && r.hosts == 0 && r.method != "CONNECT":
		r.refuse(rankHost, 400, "missing required Host header")
	case chunked && !http11:
		// net/http ignores it and frames the body by its length; a proxy
		// may not have (RFC 9112 §6.1: the framing is faulty).
		r.refuse(rankHTTP10, 400, "Transfer-Encoding in HTTP/1.0")
	}
	r.last = chunked && r.hasLength
	switch {
	case r.expect == "":
	case hasToken(r.expect, "100-continue"):
		return http11 && (chunked || length > 0) && r.status == 0
	default:
		r.refuse(rankExpect, 417, "unsupported Expect")
	}
	return false
}

// hasToken reports whether the comma-separated list v holds token, in any
// case.
func hasToken(v, token string) bool {
	for part := range strings.SplitSeq(v, ",") {
		if strings.EqualFold(trimOWS(part), token) {
			return true
		}
	}
	return false
}
