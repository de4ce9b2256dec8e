package web_test

import (
	"net/http"
	"testing"

	"github.com/loomrt/loom/web"
)

// TestGroupPrefix: a prefix must start with / and not end with one; the
// empty prefix adds nothing and is allowed.
func TestGroupPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		panics bool
	}{
		{"", false},
		{"/api", false},
		{"/api/v1", false},
		{"api", true},
		{"/api/", true},
		{"/", true},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			app := newApp(t)
			var g *web.Group
			func() {
				defer func() {
					if r := recover(); (r != nil) != tc.panics {
						t.Errorf("Group(%q): panic %v; want a panic: %v", tc.prefix, r, tc.panics)
					}
				}()
				g = app.Group(tc.prefix) // the panic is Group's own, before any route
			}()
			if tc.panics || g == nil {
				return
			}
			g.Get("/x", text("x"))
			if rec := do(t, app, http.MethodGet, tc.prefix+"/x", ""); rec.Code != http.StatusOK {
				t.Errorf("GET %s/x: got %d; want 200", tc.prefix, rec.Code)
			}
		})
	}
}
