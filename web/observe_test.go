package web_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/loomrt/loom/web"
)

// observed records the Responses an Observer is told about.
type observed struct {
	mu    sync.Mutex
	resps []web.Response
}

func (o *observed) Observe(_ *http.Request, resp web.Response) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.resps = append(o.resps, resp)
}

// TestObserversSeeAPanic checks that an Observer is told a handler
// panicked, with the 500 the client got, and that a handler that returns
// normally is not reported as one. (handler.go, logPanic's marking loop.)
func TestObserversSeeAPanic(t *testing.T) {
	app := newApp(t)
	var o observed
	app.Observe(&o)
	app.Get("/panic", func(w http.ResponseWriter, r *http.Request) error { panic("boom") })
	app.Get("/ok", text("ok"))
	for _, tt := range []struct {
		path     string
		status   int
		panicked bool
	}{
		{"/panic", 500, true},
		{"/ok", 200, false},
	} {
		o.mu.Lock()
		o.resps = nil
		o.mu.Unlock()
		do(t, app, "GET", tt.path, "")
		o.mu.Lock()
		resps := slices.Clone(o.resps)
		o.mu.Unlock()
		if len(resps) != 1 || resps[0].Status != tt.status || resps[0].Panicked != tt.panicked {
			t.Errorf("GET %s: observers got %+v; want one Response with status %d, Panicked %t", tt.path, resps, tt.status, tt.panicked)
		}
	}
}
