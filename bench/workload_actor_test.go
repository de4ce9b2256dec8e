package bench

import (
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/loomrt/loom/internal/cmdtest"
	"github.com/loomrt/loom/web"
)

// Every actor-echo scenario's server answers GET /echo with the messages
// one request moved, under each of its dispatchers, and stops cleanly.
func TestActorEchoServes(t *testing.T) {
	for _, sc := range actorEchoScenarios() {
		for _, model := range []string{"pool:2", "virtual"} {
			t.Run(sc.Name+"/"+model, func(t *testing.T) {
				t.Setenv("LOOM_EXECUTOR", model)
				app, err := web.New()
				if err != nil {
					t.Fatal(err)
				}
				plan := sc.Quick
				plan.Connections = 4
				stop, err := sc.Serve(t.Context(), app, plan, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				// Registered first, so it runs after cmdtest.Serve has
				// stopped the app.
				t.Cleanup(func() {
					if err := stop(); err != nil {
						t.Errorf("stop: %v", err)
					}
				})
				url := cmdtest.Serve(t, app)

				client := &http.Client{Transport: &http.Transport{}}
				var wg sync.WaitGroup
				bodies := make(chan string, 8)
				for range 8 { // more requests than pairs: they wait for one
					wg.Go(func() {
						resp, err := client.Get(url + "/echo")
						if err != nil {
							t.Error(err)
							return
						}
						defer resp.Body.Close()
						b, _ := io.ReadAll(resp.Body)
						bodies <- string(b)
					})
				}
				wg.Wait()
				close(bodies)
				client.CloseIdleConnections()
				for b := range bodies {
					if b != sc.ExpectBody {
						t.Errorf("body %q; want %q", b, sc.ExpectBody)
					}
				}
			})
		}
	}
}

func TestActorEchoLimit(t *testing.T) {
	l := actorEchoLimit(Plan{})
	if l.PerSecond <= 0 || l.Formula == "" {
		t.Errorf("got %+v; want a positive rate and a formula", l)
	}
}
