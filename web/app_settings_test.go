package web_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
)

// readAll is a handler that reads the whole body and answers its length.
func readAll(w http.ResponseWriter, r *http.Request) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%d bytes", len(b))
	return err
}

// TestAppBodyLimitWithoutTimeout: an App with a body limit and no body
// timeout still holds a body of undeclared length to the limit. The App
// wraps bodies when either is set; a check that wrapped them only for a
// timeout would let this body through (app.go, noteBody).
func TestAppBodyLimitWithoutTimeout(t *testing.T) {
	app := newApp(t, web.WithBodyLimit(10), web.WithBodyTimeout(0))
	app.Post("/", readAll)
	for _, tt := range []struct {
		size, status int
	}{{10, 200}, {11, 413}} {
		req := httptest.NewRequest(http.MethodPost, "/", io.MultiReader(strings.NewReader(strings.Repeat("x", tt.size))))
		req.ContentLength = -1 // chunked: only the reader can stop it
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		if rec.Code != tt.status {
			t.Errorf("%d bytes under WithBodyLimit(10), WithBodyTimeout(0): got %d %q; want %d", tt.size, rec.Code, rec.Body, tt.status)
		}
	}
}

// TestAppBodyTimeoutWithoutLimit: an App with a body timeout and no body
// limit still cuts off a client that stalls in its body with a 408 (the
// mirror of TestAppBodyLimitWithoutTimeout).
func TestAppBodyTimeoutWithoutLimit(t *testing.T) {
	app := newApp(t, web.WithBodyLimit(0), web.WithBodyTimeout(bodyTimeout))
	app.Post("/", readAll)
	url, _ := serveApp(t, app)
	got := sendSlowly(t, strings.TrimPrefix(url, "http://"), postHead("/", "text/plain", 20), nil, "0123456789")
	if got.status != http.StatusRequestTimeout {
		t.Errorf("10 of 20 bytes, then a stall, under WithBodyLimit(0), WithBodyTimeout(%v): got %d %q; want 408", bodyTimeout, got.status, got.body)
	}
}

// spyEngine is an Engine that only says its name: the tests ask which
// engine an App chose, never serve on it.
type spyEngine struct{}

func (spyEngine) Name() string { return "spy" }

func (spyEngine) NewServer(*http.Server, web.EngineSettings) (web.EngineServer, error) {
	return nil, errors.New("spy engine: does not serve")
}

// TestEngineChoice: LOOM_ENGINE chooses the engine of an App made without
// WithEngine, and a name nothing registered is an error from New naming the
// variable; WithEngine wins over LOOM_ENGINE, which is then not read at all.
func TestEngineChoice(t *testing.T) {
	t.Setenv(web.EngineEnv, "no-such-engine")
	_, err := web.New()
	if !errors.Is(err, web.ErrEngine) || !strings.Contains(err.Error(), web.EngineEnv) || !strings.Contains(err.Error(), "no-such-engine") {
		t.Errorf("New with %s=no-such-engine: got %v; want ErrEngine naming the variable and the value", web.EngineEnv, err)
	}
	app := newApp(t, web.WithEngine(spyEngine{}))
	if got := app.EngineName(); got != "spy" {
		t.Errorf("New(WithEngine(spy)) with %s set: EngineName() = %q; want spy", web.EngineEnv, got)
	}
	t.Setenv(web.EngineEnv, "std")
	if got := newApp(t).EngineName(); got != "std" {
		t.Errorf("New() with %s=std: EngineName() = %q; want std", web.EngineEnv, got)
	}
}

// TestObserversSeeABodyRefusedBeforeRouting: a body whose declared length
// is over every limit is refused before routing, and the observers are
// told about that 413 as about any response (app.go, serveTooLarge).
func TestObserversSeeABodyRefusedBeforeRouting(t *testing.T) {
	app := newApp(t, web.WithBodyLimit(10))
	var o observed
	app.Observe(&o)
	app.Post("/", readAll)
	rec := do(t, app, http.MethodPost, "/", strings.Repeat("x", 11))
	o.mu.Lock()
	resps := slices.Clone(o.resps)
	o.mu.Unlock()
	if rec.Code != http.StatusRequestEntityTooLarge || len(resps) != 1 || resps[0].Status != http.StatusRequestEntityTooLarge {
		t.Errorf("11 bytes declared under WithBodyLimit(10): got %d, observers got %+v; want 413 and one Response of 413", rec.Code, resps)
	}
}

// TestHold: a handler that holds its App gets a stop context that ends when
// the App shuts down, and Shutdown waits for its release; once the App is
// shutting down, Hold refuses with a 503. Outside an App, Hold gives a
// context that never ends and a release that does nothing.
func TestHold(t *testing.T) {
	app := newApp(t)
	var stop context.Context
	var release func()
	app.Get("/hold", func(w http.ResponseWriter, r *http.Request) error {
		var err error
		stop, release, err = web.Hold(w)
		return err
	})
	if rec := do(t, app, http.MethodGet, "/hold", ""); rec.Code != http.StatusOK || stop == nil || stop.Err() != nil {
		t.Fatalf("Hold on a running App: got %d, stop %v; want 200 and a live stop context", rec.Code, stop)
	}
	shut := make(chan error, 1)
	go func() { shut <- app.Shutdown(context.Background()) }()
	select {
	case <-stop.Done():
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while a handler held the App", err)
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not end within 10s of Shutdown")
	}
	release()
	release() // a second call does nothing
	select {
	case err := <-shut:
		if err != nil {
			t.Errorf("Shutdown after the release: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown still waiting 10s after the release")
	}
	if rec := do(t, app, http.MethodGet, "/hold", ""); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("Hold on an App shut down: got %d; want 503", rec.Code)
	}

	outside, done, err := web.Hold(httptest.NewRecorder())
	if err != nil || outside.Done() != nil {
		t.Errorf("Hold outside an App: got err %v, a stop context that can end; want nil and one that never ends", err)
	}
	done()
	// A HandlerFunc on another mux records its response in a writer of
	// its own, which has no App. (app.go, Hold's rw.app == nil.)
	web.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		outside, done, err = web.Hold(w)
		return err
	}).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if err != nil || outside.Done() != nil {
		t.Errorf("Hold in a HandlerFunc outside an App: got err %v, a stop context that can end; want nil and one that never ends", err)
	}
	done()
}

// TestHoldWaitsForEveryHolder holds the App from two handlers: Shutdown
// waits until both released, and each release counts once.
func TestHoldWaitsForEveryHolder(t *testing.T) {
	app := newApp(t)
	var mu sync.Mutex
	var releases []func()
	var stop context.Context
	app.Get("/hold", func(w http.ResponseWriter, r *http.Request) error {
		s, release, err := web.Hold(w)
		mu.Lock()
		releases, stop = append(releases, release), s
		mu.Unlock()
		return err
	})
	for range 2 {
		if rec := do(t, app, http.MethodGet, "/hold", ""); rec.Code != http.StatusOK {
			t.Fatalf("Hold: got %d; want 200", rec.Code)
		}
	}
	shut := make(chan error, 1)
	go func() { shut <- app.Shutdown(context.Background()) }()
	select {
	case <-stop.Done(): // Shutdown has begun
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not end within 10s of Shutdown")
	}
	releases[0]()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with one handler still holding the App", err)
	case <-time.After(100 * time.Millisecond):
	}
	releases[1]()
	select {
	case err := <-shut:
		if err != nil {
			t.Errorf("Shutdown after both releases: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown still waiting 10s after both releases")
	}
}

// TestObserversSeeAnEmptyResponseAs200: a handler that writes nothing
// sends an empty 200, and observers are told 200, not 0.
func TestObserversSeeAnEmptyResponseAs200(t *testing.T) {
	app := newApp(t)
	var o observed
	app.Observe(&o)
	app.Get("/", func(http.ResponseWriter, *http.Request) error { return nil })
	do(t, app, http.MethodGet, "/", "")
	o.mu.Lock()
	resps := slices.Clone(o.resps)
	o.mu.Unlock()
	if len(resps) != 1 || resps[0].Status != http.StatusOK || resps[0].Bytes != 0 {
		t.Errorf("a handler that wrote nothing: observers got %+v; want one Response of 200, 0 bytes", resps)
	}
}

// TestRegisterEngineRefusesTakenNames: "std", "" and a name registered
// already panic; WithEngine(nil) panics.
func TestRegisterEngineRefusesTakenNames(t *testing.T) {
	// The process keeps it (a name no other test uses): once, for -count=N.
	registerTestEngine.Do(func() { web.RegisterEngine(namedEngine("test-registered")) })
	for _, name := range []string{"std", "", "test-registered"} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "already taken") {
					t.Errorf("RegisterEngine(%q): recovered %v; want a panic saying the name is taken", name, v)
				}
			}()
			web.RegisterEngine(namedEngine(name))
		}()
	}
	t.Setenv(web.EngineEnv, "test-registered")
	if got := newApp(t).EngineName(); got != "test-registered" {
		t.Errorf("New() with %s=test-registered: EngineName() = %q; want test-registered", web.EngineEnv, got)
	}
	defer func() {
		if recover() == nil {
			t.Error("WithEngine(nil) did not panic")
		}
	}()
	web.WithEngine(nil)
}

var registerTestEngine sync.Once

// namedEngine is spyEngine under another name.
type namedEngine string

func (e namedEngine) Name() string { return string(e) }

func (namedEngine) NewServer(*http.Server, web.EngineSettings) (web.EngineServer, error) {
	return nil, errors.New("named engine: does not serve")
}

// TestErrorAfterAnExplicit200: a handler that sent its 200 with
// WriteHeader and then fails cannot change the response: the error is
// logged, not appended to the body (writer.go, status >= 200).
func TestErrorAfterAnExplicit200(t *testing.T) {
	app := newApp(t)
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusOK)
		return errors.New("failed after the header")
	})
	rec := do(t, app, http.MethodGet, "/", "")
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("got %d %q; want the 200 as sent, with no error text after it", rec.Code, rec.Body)
	}
}

// TestObserversSeeTheFinalStatus: observers are told the status that was
// sent: not an informational 103 before it, nor a superfluous WriteHeader
// after it.
func TestObserversSeeTheFinalStatus(t *testing.T) {
	app := newApp(t)
	var o observed
	app.Observe(&o)
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusCreated)
		w.WriteHeader(http.StatusInternalServerError) // superfluous: net/http logs it and sends nothing
		return nil
	})
	do(t, app, http.MethodGet, "/", "") // the recorder keeps the 103 as its Code
	o.mu.Lock()
	resps := slices.Clone(o.resps)
	o.mu.Unlock()
	if len(resps) != 1 || resps[0].Status != http.StatusCreated {
		t.Errorf("103 then 201: observers got %+v; want one Response of 201", resps)
	}
}
