package web_test

import (
	"context"
	"io"
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

type startKey struct{}

// starter marks each request's context and records what Observe got.
type starter struct {
	observe bool
	mu      sync.Mutex
	seen    []string // Observe: the route pattern and the mark
}

func (s *starter) Start(r *http.Request) (context.Context, bool) {
	return context.WithValue(r.Context(), startKey{}, "started"), s.observe
}

func (s *starter) Observe(r *http.Request, _ web.Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mark, _ := r.Context().Value(startKey{}).(string)
	s.seen = append(s.seen, r.Pattern+" "+mark)
}

// TestStarter: the handler sees the context Start made; Observe gets that
// request, routed, when Start asks for it or a plain observer needs every
// request, and is not called otherwise.
func TestStarter(t *testing.T) {
	for _, tt := range []struct {
		name    string
		observe bool
		plain   bool
		want    []string
	}{
		{"observe", true, false, []string{"GET /{$} started"}},
		{"leave out", false, false, nil},
		{"leave out, plain observer", false, true, []string{"GET /{$} started"}},
	} {
		app := newApp(t)
		s := &starter{observe: tt.observe}
		app.Observe(s)
		var o observed
		if tt.plain {
			app.Observe(&o)
		}
		app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
			mark, _ := r.Context().Value(startKey{}).(string)
			_, err := io.WriteString(w, mark)
			return err
		})
		if got := do(t, app, "GET", "/", ""); got.Body.String() != "started" {
			t.Errorf("%s: handler got mark %q; want started", tt.name, got.Body)
		}
		s.mu.Lock()
		if !slices.Equal(s.seen, tt.want) {
			t.Errorf("%s: Observe got %q; want %q", tt.name, s.seen, tt.want)
		}
		s.mu.Unlock()
		if tt.plain && len(o.resps) != 1 {
			t.Errorf("%s: plain observer got %d responses; want 1", tt.name, len(o.resps))
		}
	}
}
