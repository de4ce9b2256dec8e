package nbio

import (
	"testing"
)

// scanAll feeds parts to a new scan in turn, as reads would deliver them,
// and returns the bytes it took, whether the headers ended and why they are
// malformed.
func scanAll(parts ...[]byte) (n int, end bool, bad string) {
	var s headerScan
	for _, part := range parts {
		if len(part) == 0 {
			continue
		}
		k, e, b := s.feed(part)
		n += k
		if e || b != "" {
			return n, e, b
		}
	}
	return n, false, ""
}

func TestHeaderScan(t *testing.T) {
	tests := []struct {
		req     string
		wantN   int // -1: all of req
		wantEnd bool
		wantBad string
	}{
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\nbody", 27, true, ""},
		{"GET / HTTP/1.1\r\nHost: a\r\n", -1, false, ""},
		{"GET / HTTP/1.1\nHost: a\n\nbody", 24, true, ""},
		{"GET / HTTP/1.1\r\nFoo Bar: x\r\n\r\n", 20, false, spacedName},
		{"GET / HTTP/1.1\r\nFoo : x\r\n\r\n", 20, false, spacedName},
		{"GET / HTTP/1.1\r\nFoo\tBar: x\r\n\r\n", 20, false, "malformed header line"},
		{"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 26, false, "obsolete line folding"},
		{"GET / HTTP/1.1\r\n folded: a\r\n\r\n", 17, false, "obsolete line folding"},
		{"GET / HTTP/1.1\r\n: x\r\n\r\n", 17, false, "invalid header name"},
		{"GET / HTTP/1.1\r\nFoo\r\n\r\n", 20, false, "malformed header line"},
		{"GET / HTTP/1.1\r\n\rX", 18, false, "malformed header line"},
		// A space in a value, or in the request line, is fine.
		{"GET /a b HTTP/1.1\r\nX: a b\r\n\r\n", 29, true, ""},
	}
	for _, tt := range tests {
		want := tt.wantN
		if want < 0 {
			want = len(tt.req)
		}
		n, end, bad := scanAll([]byte(tt.req))
		if n != want || end != tt.wantEnd || bad != tt.wantBad {
			t.Errorf("%q: got %d, %v, %q; want %d, %v, %q", tt.req, n, end, bad, want, tt.wantEnd, tt.wantBad)
		}
	}
}

// FuzzHeaderScan splits a request at two points and wants the scan of the
// three parts to agree with the scan of the whole: the header limit and the
// refusals must not depend on how the bytes arrived.
func FuzzHeaderScan(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\nbody"), uint16(3), uint16(20))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), uint16(25), uint16(26))
	f.Add([]byte("GET / HTTP/1.1\r\nFoo Bar: a\r\n\r\n"), uint16(18), uint16(19))
	f.Add([]byte("\r\n\r\n"), uint16(1), uint16(2))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a\r\n"), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, req []byte, i, j uint16) {
		a, b := min(int(i), len(req)), min(int(j), len(req))
		if a > b {
			a, b = b, a
		}
		n, end, bad := scanAll(req[:a], req[a:b], req[b:])
		wn, wend, wbad := scanAll(req)
		if n != wn || end != wend || bad != wbad {
			t.Fatalf("%q split at %d, %d: got %d, %v, %q; whole: %d, %v, %q", req, a, b, n, end, bad, wn, wend, wbad)
		}
		if end && (n < 2 || req[n-1] != '\n') {
			t.Fatalf("%q: headers end at %d, not after an LF", req, n)
		}
	})
}
