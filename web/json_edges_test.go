package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loomrt/loom/web"
)

// TestReadJSONMediaTypes: application/json and any type with a "+json"
// suffix are JSON; "+json" alone, a suffix with nothing before it, is not.
func TestReadJSONMediaTypes(t *testing.T) {
	app := newApp(t)
	app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
		var v map[string]int
		if err := web.ReadJSON(r, &v); err != nil {
			return err
		}
		return web.WriteJSON(w, http.StatusOK, v)
	})
	for _, tt := range []struct {
		contentType string
		status      int
	}{
		{"application/json", 200},
		{"application/json; charset=utf-8", 200},
		{"application/problem+json", 200},
		{"a/+json", 200},
		{"+json", 415},
		{"json", 415},
		{"text/plain", 415},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"a":1}`))
		req.Header.Set("Content-Type", tt.contentType)
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		if rec.Code != tt.status {
			t.Errorf("Content-Type %q: got %d %q; want %d", tt.contentType, rec.Code, rec.Body, tt.status)
		}
	}
}
