package load

import (
	"strings"
	"testing"
)

// TestRequestDeclaresItsBodyLength checks which requests carry a
// Content-Length: any with a body, whatever the method, and a POST, PUT or
// PATCH without one (as 0); a GET without a body carries none.
func TestRequestDeclaresItsBodyLength(t *testing.T) {
	for _, tc := range []struct {
		target Target
		want   string // "": no Content-Length
	}{
		{Target{URL: "http://127.0.0.1:1/"}, ""},
		{Target{URL: "http://127.0.0.1:1/", Body: []byte("abc")}, "Content-Length: 3\r\n"},
		{Target{URL: "http://127.0.0.1:1/", Body: []byte{}}, "Content-Length: 0\r\n"},
		{Target{Method: "POST", URL: "http://127.0.0.1:1/"}, "Content-Length: 0\r\n"},
		{Target{Method: "PUT", URL: "http://127.0.0.1:1/"}, "Content-Length: 0\r\n"},
		{Target{Method: "PATCH", URL: "http://127.0.0.1:1/"}, "Content-Length: 0\r\n"},
		{Target{Method: "DELETE", URL: "http://127.0.0.1:1/"}, ""},
	} {
		req, err := buildRequest(tc.target)
		if err != nil {
			t.Fatalf("%s with body %q: %v", tc.target.Method, tc.target.Body, err)
		}
		raw := string(req.raw)
		if got := strings.Contains(raw, "Content-Length"); tc.want == "" && got || tc.want != "" && !strings.Contains(raw, tc.want) {
			t.Errorf("%s with body %q: request %q; want Content-Length %q", tc.target.Method, tc.target.Body, raw, tc.want)
		}
	}
}
