package web_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/internal/webtest"
)

// probe GETs url on a new connection and returns the status and body, or
// status 0 and the error.
func probe(url string) (int, string, error) {
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestLivezAndReadyz(t *testing.T) {
	app := newApp(t, web.WithProbes())
	url, _ := serveApp(t, app)
	for _, tc := range []struct{ path, want string }{
		{"/livez", "ok\n"},
		{"/readyz", "ok\n"},
		{"/readyz?verbose", "[+]shutdown ok\n[+]threads ok\nreadyz check passed\n"},
	} {
		if status, body, err := probe(url + tc.path); err != nil || status != 200 || body != tc.want {
			t.Errorf("GET %s: got %d %q %v; want 200 %q", tc.path, status, body, err, tc.want)
		}
	}
	// HEAD is answered as GET is; another method is left to the mux,
	// which has no such route.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	for _, tc := range []struct {
		method, path string
		want         int
	}{{http.MethodHead, "/livez", 200}, {http.MethodHead, "/readyz", 200}, {http.MethodPost, "/livez", 404}} {
		req, _ := http.NewRequest(tc.method, url+tc.path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d; want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}
}

// TestProbesPassDecoratorsAndExecutors: the probes answer although every
// request is refused by the App's decorator and its executor is full.
func TestProbesPassDecoratorsAndExecutors(t *testing.T) {
	full := loom.Limit(1, loom.WithQueue(0))
	defer full.Shutdown(context.Background())
	refuse := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "who are you", http.StatusUnauthorized)
		})
	}
	app := newApp(t, web.WithProbes(), web.WithExecutor(full), web.WithDecorators(refuse))
	url, _ := serveApp(t, app)
	hold := make(chan struct{})
	defer close(hold)
	go func() { _ = full.Run(context.Background(), func(context.Context) { <-hold }) }()
	for full.Stats().Running == 0 {
		time.Sleep(time.Millisecond)
	}
	if status, body, err := probe(url + "/livez"); err != nil || status != 200 {
		t.Errorf("GET /livez: got %d %q %v; want 200", status, body, err)
	}
	if status, _, err := probe(url + "/other"); err != nil || status != 401 {
		t.Errorf("GET /other: got %d %v; want the decorator's 401", status, err)
	}
}

// TestReadyzFollowsCriticalExecutors: /readyz fails while a critical
// executor is full and right after it rejected, and recovers; a full
// executor not marked critical does not matter.
func TestReadyzFollowsCriticalExecutors(t *testing.T) {
	critical := loom.Limit(1, loom.WithQueue(0), loom.WithName("payments"))
	other := loom.Limit(1, loom.WithQueue(0), loom.WithName("reports"))
	defer critical.Shutdown(context.Background())
	defer other.Shutdown(context.Background())
	app := newApp(t, web.WithProbes())
	entered := make(chan string, 2)
	leave := make(chan struct{})
	wait := func(w http.ResponseWriter, r *http.Request) error {
		entered <- r.URL.Path
		<-leave
		return nil
	}
	app.Get("/pay", wait, web.WithExecutor(critical), web.WithCritical())
	app.Get("/report", wait, web.WithExecutor(other))
	url, _ := serveApp(t, app)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	readyz := func(want int, wantText string) {
		t.Helper()
		status, body, err := probe(url + "/readyz")
		if err != nil || status != want || !strings.Contains(body, wantText) {
			t.Errorf("GET /readyz: got %d %q %v; want %d with %q", status, body, err, want, wantText)
		}
	}
	readyz(200, "ok")
	report := webtest.GetAsync(client, url+"/report")
	<-entered
	readyz(200, "ok") // reports is full, but not critical

	pay := webtest.GetAsync(client, url+"/pay")
	<-entered
	readyz(503, "[-]executor payments failed: full: 1 running, 0 queued")
	if status, _, _ := probe(url + "/pay"); status != 503 {
		t.Errorf("a second /pay: got %d; want 503", status)
	}
	close(leave)
	<-pay
	<-report
	readyz(503, "[-]executor payments failed: rejected 1 since the previous probe")
	readyz(200, "ok")
}

// TestReadyChecks: a check that fails or hangs makes /readyz answer 503
// naming it; App.Ready says the same.
func TestReadyChecks(t *testing.T) {
	var down atomic.Bool
	app := newApp(t, web.WithReadyCheck("database", func(ctx context.Context) error {
		if down.Load() {
			return errors.New("connection refused")
		}
		return nil
	}), web.WithReadyCheck("cache", func(ctx context.Context) error {
		if down.Load() {
			<-ctx.Done() // hangs until the check's timeout
			return ctx.Err()
		}
		return nil
	}))
	url, _ := serveApp(t, app)
	if status, body, err := probe(url + "/readyz?verbose"); err != nil || status != 200 || !strings.Contains(body, "[+]database ok\n[+]cache ok\n") {
		t.Errorf("up: got %d %q %v; want 200 listing both checks", status, body, err)
	}
	down.Store(true)
	status, body, err := probe(url + "/readyz")
	if err != nil || status != 503 || !strings.Contains(body, "[-]database failed: connection refused") ||
		!strings.Contains(body, "[-]cache failed: context deadline exceeded") {
		t.Errorf("down: got %d %q %v; want 503 naming both checks", status, body, err)
	}
	if err := app.Ready(context.Background()); !errors.Is(err, web.ErrNotReady) || !strings.Contains(err.Error(), "database: connection refused") {
		t.Errorf("App.Ready: got %v; want ErrNotReady naming the database", err)
	}
	down.Store(false)
	if err := app.Ready(context.Background()); err != nil {
		t.Errorf("App.Ready once the checks pass: %v", err)
	}
}

// TestReadyzFailsBeforeTheListenerCloses polls /readyz, each time on a new
// connection, while Serve stops with a shutdown delay: it must see 200,
// then 503 while connections are still accepted, then refused connections,
// in that order and never back.
func TestReadyzFailsBeforeTheListenerCloses(t *testing.T) {
	app := newApp(t, web.WithProbes(), web.WithShutdownDelay(time.Second))
	url, stop := serveApp(t, app)
	states := pollReadyz(t, url+"/readyz", stop)
	want := []string{"200", "503", "refused"}
	if !slices.Equal(states, want) {
		t.Errorf("/readyz went through %v; want %v", states, want)
	}
}

// pollReadyz probes url until it is refused, calling stop once it has
// answered 200 a few times; it returns the answers it got, consecutive
// repeats folded.
func pollReadyz(t *testing.T, url string, stop func() error) []string {
	t.Helper()
	var states []string
	stopped := make(chan error, 1)
	oks := 0
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		status, _, err := probe(url)
		state := "refused"
		if err == nil {
			state = strconv.Itoa(status)
		}
		if len(states) == 0 || states[len(states)-1] != state {
			states = append(states, state)
		}
		if state == "200" {
			if oks++; oks == 3 {
				go func() { stopped <- stop() }()
			}
		}
		if state == "refused" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if oks >= 3 {
		if err := <-stopped; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
	return states
}

// TestReadyzEdges: an executor without a bound is never full, nor is one
// with every slot taken while its queue has room; a check gets
// ReadyCheckTimeout, 2 s, to answer; WithReadyCheck refuses a check
// without a name or a function. (probes.go, full's limit > 0 and
// s.Queued >= s.QueueCapacity; WithReadyCheck's guard.)
func TestReadyzEdges(t *testing.T) {
	unbounded := loom.Virtual(loom.WithName("unbounded"))
	queued := loom.Limit(1, loom.WithQueue(1), loom.WithName("queued"))
	defer unbounded.Shutdown(context.Background())
	defer queued.Shutdown(context.Background())
	left := make(chan time.Duration, 1)
	app := newApp(t, web.WithReadyCheck("deadline", func(ctx context.Context) error {
		d, _ := ctx.Deadline()
		select {
		case left <- time.Until(d):
		default:
		}
		return nil
	}))
	entered, leave := make(chan struct{}), make(chan struct{})
	app.Get("/u", func(w http.ResponseWriter, r *http.Request) error { return nil }, web.WithExecutor(unbounded), web.WithCritical())
	app.Get("/q", func(w http.ResponseWriter, r *http.Request) error {
		close(entered)
		<-leave
		return nil
	}, web.WithExecutor(queued), web.WithCritical())
	url, _ := serveApp(t, app)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	q := webtest.GetAsync(client, url+"/q")
	<-entered // queued's one slot is taken; its queue is empty
	if status, body, err := probe(url + "/readyz"); err != nil || status != 200 {
		t.Errorf("GET /readyz: got %d %q %v; want 200", status, body, err)
	}
	close(leave)
	<-q
	if d := <-left; d <= 0 || d > 2*time.Second {
		t.Errorf("a check's deadline was %v away; want at most 2s", d)
	}
	for _, tc := range []struct {
		name  string
		check func(context.Context) error
	}{{"", func(context.Context) error { return nil }}, {"db", nil}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("WithReadyCheck(%q, %v): no panic", tc.name, tc.check != nil)
				}
			}()
			web.WithReadyCheck(tc.name, tc.check)
		}()
	}
}

// TestNoProbesWithoutWithProbes: without WithProbes, /livez and /readyz
// are the App's own paths. (app.go, ServeHTTP's a.settings.probes.)
func TestNoProbesWithoutWithProbes(t *testing.T) {
	app := newApp(t)
	app.Get("/livez", text("mine"))
	if rec := do(t, app, "GET", "/livez", ""); rec.Code != 200 || rec.Body.String() != "mine" {
		t.Errorf("GET /livez: got %d %q; want the App's route", rec.Code, rec.Body.String())
	}
	if rec := do(t, app, "GET", "/readyz", ""); rec.Code != http.StatusNotFound {
		t.Errorf("GET /readyz: got %d; want 404", rec.Code)
	}
}
