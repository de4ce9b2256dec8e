package bench

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/loomrt/loom/web"
)

// The answers of the Cask seed's routes, also those of bench/peers'
// peer-server: helloBody for the minimal app, sleepBody (38 bytes) for the
// sleeping route.
const (
	helloBody = "Hello World!"
	sleepBody = "Hello World! Hello World! Hello World!"
)

// serveHello answers GET / at once: the framework's own cost.
func serveHello(_ context.Context, app *web.App, _ Plan, _ string) (func() error, error) {
	app.Get("/", func(w http.ResponseWriter, _ *http.Request) error {
		_, err := io.WriteString(w, helloBody)
		return err
	})
	return nil, nil
}

// serveSleep answers GET path after the plan's service time, as the seeds'
// Thread.sleep handlers do. The wait ends early if the client goes away.
func serveSleep(path string) func(context.Context, *web.App, Plan, string) (func() error, error) {
	return func(_ context.Context, app *web.App, p Plan, _ string) (func() error, error) {
		app.Get(path, func(w http.ResponseWriter, r *http.Request) error {
			timer := time.NewTimer(p.Service)
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-r.Context().Done():
				return r.Context().Err()
			}
			_, err := io.WriteString(w, sleepBody)
			return err
		})
		return nil, nil
	}
}
