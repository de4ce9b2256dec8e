package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/loomrt/loom/internal/harness/cmdtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestEcosystemMiddleware serves the app on each engine and checks that
// chi's RequestID and SetHeader, rs/cors and httprate do what their own
// documentation says, as loom decorators of the App and of a group whose
// routes run on their own executor.
func TestEcosystemMiddleware(t *testing.T) {
	for _, engine := range []string{"std", "nbio"} {
		t.Run(engine, func(t *testing.T) {
			t.Setenv("LOOM_ENGINE", engine)
			testMiddleware(t)
		})
	}
}

func testMiddleware(t *testing.T) {
	const limit = 3
	app, err := newApp(limit)
	if err != nil {
		t.Fatal(err)
	}
	url := cmdtest.Serve(t, app)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	do := func(method, path string, header map[string]string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}

	t.Run("request ID and security headers", func(t *testing.T) {
		seen := map[string]bool{}
		for range 2 {
			resp, body := do("GET", "/api/hello", nil)
			id := strings.TrimSpace(strings.TrimPrefix(body, "hello, request "))
			if resp.StatusCode != 200 || id == "" || seen[id] {
				t.Errorf("got %d %q; want 200 and a request ID of its own", resp.StatusCode, body)
			}
			seen[id] = true
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options: got %q; want nosniff", got)
			}
			if got := resp.Header.Get("X-Frame-Options"); got != "DENY" {
				t.Errorf("X-Frame-Options: got %q; want DENY", got)
			}
		}
		if _, body := do("GET", "/api/hello", map[string]string{"X-Request-Id": "abc-123"}); body != "hello, request abc-123\n" {
			t.Errorf("with the client's X-Request-Id: got %q; want it echoed", body)
		}
	})

	t.Run("CORS", func(t *testing.T) {
		tests := []struct {
			name, method, origin string
			header               map[string]string
			status               int
			allowOrigin          string
		}{
			{"simple request, allowed origin", "GET", "https://app.example", nil, 200, "https://app.example"},
			{"simple request, other origin", "GET", "https://evil.example", nil, 200, ""},
			{"preflight, allowed origin", "OPTIONS", "https://app.example",
				map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}, 204, "https://app.example"},
			{"preflight, method not allowed", "OPTIONS", "https://app.example",
				map[string]string{"Access-Control-Request-Method": "DELETE"}, 204, ""},
		}
		for _, tc := range tests {
			h := map[string]string{"Origin": tc.origin}
			for k, v := range tc.header {
				h[k] = v
			}
			resp, body := do(tc.method, "/api/hello", h)
			if resp.StatusCode != tc.status || resp.Header.Get("Access-Control-Allow-Origin") != tc.allowOrigin {
				t.Errorf("%s: got %d, Access-Control-Allow-Origin %q (%q); want %d, %q", tc.name, resp.StatusCode,
					resp.Header.Get("Access-Control-Allow-Origin"), body, tc.status, tc.allowOrigin)
			}
			if tc.allowOrigin != "" && tc.method == "OPTIONS" && resp.Header.Get("Access-Control-Max-Age") != "600" {
				t.Errorf("%s: Access-Control-Max-Age %q; want 600", tc.name, resp.Header.Get("Access-Control-Max-Age"))
			}
		}
	})

	t.Run("rate limit on a route with its own executor", func(t *testing.T) {
		for i := range limit + 2 {
			resp, body := do("GET", "/api/reports/7", nil)
			switch {
			case i < limit && (resp.StatusCode != 200 || !strings.HasPrefix(body, "report 7, request ")):
				t.Errorf("request %d: got %d %q; want 200 and the report", i+1, resp.StatusCode, body)
			case i >= limit && (resp.StatusCode != 429 || resp.Header.Get("Retry-After") == ""):
				t.Errorf("request %d: got %d %q; want 429 with Retry-After", i+1, resp.StatusCode, body)
			}
		}
		var found bool
		for _, e := range app.Executors() {
			if s := e.Stats(); s.Name == "reports" {
				found = true
				if s.Completed != limit {
					t.Errorf("executor reports ran %d handlers; want %d: refused requests never reach it", s.Completed, limit)
				}
			}
		}
		if !found {
			t.Error("no executor named reports")
		}
	})
}

func TestRun(t *testing.T) {
	cmdtest.StopsCleanly(t, run, "-addr", "127.0.0.1:0")
	cmdtest.RejectsStrayArgument(t, run)
}
