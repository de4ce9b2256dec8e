package nbio

import "testing"

// TestValidFieldValue wants the eight-bytes-at-a-time check to say what
// the byte-by-byte one says, at every position of a long value.
func TestValidFieldValue(t *testing.T) {
	base := []byte("text/html,application/xhtml+xml;q=0.9 \xe9\xff")
	for pos := range len(base) {
		for _, c := range []byte{0, 1, '\t', '\n', '\r', 0x1f, ' ', '~', 0x7f, 0x80, 0xff} {
			v := append([]byte(nil), base...)
			v[pos] = c
			if got, want := validFieldValue(string(v)), validFieldBytes(string(v)); got != want {
				t.Errorf("%q: got %v; want %v", v, got, want)
			}
		}
	}
}

// FuzzValidFieldValue: the same for any value.
func FuzzValidFieldValue(f *testing.F) {
	f.Add("text/html\x00, x")
	f.Add("a\x7fbcdefghij")
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := validFieldValue(v), validFieldBytes(v); got != want {
			t.Fatalf("%q: got %v; want %v", v, got, want)
		}
	})
}

// TestValidFieldBytes: a tab, a space, visible ASCII and obs-text are
// field-value bytes; the other control bytes and DEL are not.
func TestValidFieldBytes(t *testing.T) {
	for c := range 256 {
		want := c == '\t' || c >= ' ' && c != 0x7f
		if got := validFieldBytes(string([]byte{'a', byte(c), 'b'})); got != want {
			t.Errorf("%#x: got %v; want %v", c, got, want)
		}
	}
}

// TestParseRequestLine: method SP target SP HTTP/DIGIT.DIGIT, single
// spaces, a token for the method, anything else 400.
func TestParseRequestLine(t *testing.T) {
	tests := []struct {
		line                 string
		method, target       string
		major, minor, status int
	}{
		{"GET / HTTP/1.1", "GET", "/", 1, 1, 0},
		{"M-SEARCH * HTTP/1.0", "M-SEARCH", "*", 1, 0, 0},
		{"PRI * HTTP/2.0", "PRI", "*", 2, 0, 0},
		{"GET http://a/b?c HTTP/9.9", "GET", "http://a/b?c", 9, 9, 0},
		{"", "", "", 0, 0, 400},
		{"GET", "", "", 0, 0, 400},
		{" / HTTP/1.1", "", "", 0, 0, 400},      // no method
		{"G@T / HTTP/1.1", "", "", 0, 0, 400},   // a method that is not a token
		{"GET\t/ HTTP/1.1", "", "", 0, 0, 400},  // a tab after the method
		{"GET  HTTP/1.1", "", "", 0, 0, 400},    // no target
		{"GET  / HTTP/1.1", "", "", 0, 0, 400},  // two spaces
		{"GET /", "", "", 0, 0, 400},            // no version
		{"GET / ", "", "", 0, 0, 400},           // an empty version
		{"GET / HTTP/1.1 x", "", "", 0, 0, 400}, // a word after the version
		{"GET / HTTP/1.10", "", "", 0, 0, 400},
		{"GET / HTTX/1.1", "", "", 0, 0, 400},
		{"GET / http/1.1", "", "", 0, 0, 400},
		{"GET / HTTP/x.1", "", "", 0, 0, 400},
		{"GET / HTTP/:.1", "", "", 0, 0, 400},
		{"GET / HTTP//.1", "", "", 0, 0, 400},
		{"GET / HTTP/1x1", "", "", 0, 0, 400},
		{"GET / HTTP/1.x", "", "", 0, 0, 400},
		{"GET / HTTP/1.:", "", "", 0, 0, 400},
		{"GET / HTTP/1./", "", "", 0, 0, 400},
	}
	for _, tt := range tests {
		rl, status, _ := parseRequestLine([]byte(tt.line))
		if status != tt.status || status == 0 && (string(rl.method) != tt.method || string(rl.target) != tt.target || rl.major != tt.major || rl.minor != tt.minor) {
			t.Errorf("%q: got %d, %q %q %d.%d; want %d, %q %q %d.%d", tt.line, status, rl.method, rl.target, rl.major, rl.minor,
				tt.status, tt.method, tt.target, tt.major, tt.minor)
		}
	}
}

// TestSupported: net/http serves HTTP/1.x, and HTTP/2.0 only as the
// connection preface, PRI *.
func TestSupported(t *testing.T) {
	tests := []struct {
		method, target string
		major, minor   int
		want           bool
	}{
		{"GET", "/", 1, 1, true},
		{"GET", "/", 1, 9, true},
		{"PRI", "*", 2, 0, true},
		{"GET", "/", 2, 0, false},
		{"GET", "*", 2, 0, false},
		{"PRI", "/", 2, 0, false},
		{"PRI", "*", 2, 1, false},
		{"PRI", "*", 3, 0, false},
		{"GET", "/", 0, 9, false},
	}
	for _, tt := range tests {
		if got := supported(tt.method, tt.target, tt.major, tt.minor); got != tt.want {
			t.Errorf("%s %s HTTP/%d.%d: got %v; want %v", tt.method, tt.target, tt.major, tt.minor, got, tt.want)
		}
	}
}

// TestNbioTakes: nbio's parser reads a known method in upper case with an
// origin-form or asterisk-form target; the engine stands in for the rest.
func TestNbioTakes(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"GET / HTTP/1.1", true},
		{"OPTIONS * HTTP/1.1", true},
		{"GET http://a/ HTTP/1.1", false},
		{"CONNECT a:443 HTTP/1.1", false},
		{"get / HTTP/1.1", false},
		{"PROPFIND / HTTP/1.1", false},
	}
	for _, tt := range tests {
		rl, _, _ := parseRequestLine([]byte(tt.line))
		if got := rl.nbioTakes(); got != tt.want {
			t.Errorf("%q: got %v; want %v", tt.line, got, tt.want)
		}
	}
}

// TestRefuseKeepsWhatNetHTTPFindsFirst: of two refusals, the one net/http
// would find first is answered, whichever the engine found first.
func TestRefuseKeepsWhatNetHTTPFindsFirst(t *testing.T) {
	for _, order := range [][]rank{{rankHost, rankFieldLine}, {rankFieldLine, rankHost}} {
		var r requestCheck
		for _, k := range order {
			r.refuse(k, 400+int(k), "")
		}
		if r.status != 400+int(rankFieldLine) || r.rank != rankFieldLine {
			t.Errorf("refused at ranks %v: got status %d, rank %d; want %d, %d", order, r.status, r.rank, 400+int(rankFieldLine), rankFieldLine)
		}
	}
}

// TestHeadersEnd: Host is required in HTTP/1.1 but for CONNECT; chunked
// in HTTP/1.0 is refused; 100 (Continue) goes to an HTTP/1.1 request
// that expects it, has a body to come and is not refused.
func TestHeadersEnd(t *testing.T) {
	tests := []struct {
		name         string
		r            requestCheck
		chunked      bool
		length       int
		wantContinue bool
		wantStatus   int
		wantLast     bool
	}{
		{"HTTP/1.1 with Host", requestCheck{method: "GET", major: 1, minor: 1, hosts: 1}, false, -1, false, 0, false},
		{"HTTP/1.1 without Host", requestCheck{method: "GET", major: 1, minor: 1}, false, -1, false, 400, false},
		{"CONNECT without Host", requestCheck{method: "CONNECT", major: 1, minor: 1}, false, -1, false, 0, false},
		{"HTTP/1.0 without Host", requestCheck{method: "GET", major: 1, minor: 0}, false, -1, false, 0, false},
		{"HTTP/1.0 chunked", requestCheck{method: "POST", major: 1, minor: 0}, true, -1, false, 400, false},
		{"chunked and a length", requestCheck{method: "POST", major: 1, minor: 1, hosts: 1, hasLength: true}, true, -1, false, 0, true},
		{"100-continue, a length", requestCheck{method: "POST", major: 1, minor: 1, hosts: 1, expect: "100-continue"}, false, 5, true, 0, false},
		{"100-continue, chunked", requestCheck{method: "POST", major: 1, minor: 1, hosts: 1, expect: "100-Continue"}, true, -1, true, 0, false},
		{"100-continue, no body", requestCheck{method: "POST", major: 1, minor: 1, hosts: 1, expect: "100-continue"}, false, 0, false, 0, false},
		{"100-continue, no length", requestCheck{method: "POST", major: 1, minor: 1, hosts: 1, expect: "100-continue"}, false, -1, false, 0, false},
		{"100-continue in HTTP/1.0", requestCheck{method: "POST", major: 1, minor: 0, expect: "100-continue"}, false, 5, false, 0, false},
		{"100-continue, refused", requestCheck{method: "POST", major: 1, minor: 1, expect: "100-continue"}, false, 5, false, 400, false},
		{"another expectation", requestCheck{method: "POST", major: 1, minor: 1, hosts: 1, expect: "teapot"}, false, 5, false, 417, false},
	}
	for _, tt := range tests {
		r := tt.r
		got := r.headersEnd(tt.chunked, tt.length)
		if got != tt.wantContinue || r.status != tt.wantStatus || r.last != tt.wantLast {
			t.Errorf("%s: got continue %v, status %d, last %v; want %v, %d, %v", tt.name, got, r.status, r.last, tt.wantContinue, tt.wantStatus, tt.wantLast)
		}
	}
}
