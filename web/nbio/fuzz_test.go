package nbio

import (
	"bytes"
	"testing"
)

// FuzzHeadersEnd splits a request at two points and wants the scanner fed
// the three parts to find the end of the headers exactly when the whole
// holds a blank line, and to count the bytes up to and including it.
func FuzzHeadersEnd(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\nbody"), uint16(3), uint16(20))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), uint16(25), uint16(26))
	f.Add([]byte("\r\n\r\n"), uint16(1), uint16(2))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a\r\n"), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, req []byte, i, j uint16) {
		a, b := min(int(i), len(req)), min(int(j), len(req))
		if a > b {
			a, b = b, a
		}
		s := &server{}
		arr := &arrival{}
		found := false
		for _, part := range [][]byte{req[:a], req[a:b], req[b:]} {
			if len(part) > 0 && s.headersEnd(arr, part) {
				found = true
				break
			}
		}
		end := bytes.Index(req, endOfHeaders)
		if want := end >= 0; found != want {
			t.Fatalf("%q split at %d, %d: got found %v; want %v", req, a, b, found, want)
		}
		if found && arr.size != end+len(endOfHeaders) {
			t.Fatalf("%q split at %d, %d: got size %d; want %d", req, a, b, arr.size, end+len(endOfHeaders))
		}
	})
}
