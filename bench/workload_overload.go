package bench

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/loomrt/loom/web"
)

// The overload scenario's server: a resource of known capacity, as a
// database connection pool is.
const (
	overloadSlots    = 10
	overloadHold     = 10 * time.Millisecond
	overloadCapacity = overloadSlots * int(time.Second/overloadHold) // requests per second
	overloadBody     = "query done"
	// overloadUnloadedRate is the load of the unloaded phase each run
	// begins with, whose p99 the loaded p99 is judged against: a fifth of
	// capacity, at which 10 slots almost never make a request wait.
	overloadUnloadedRate = float64(overloadCapacity) / 5
)

// serveOverload answers GET /query after holding one of overloadSlots for
// overloadHold. Waiting for a slot ends when the client goes away, as
// database/sql's wait for a connection does.
func serveOverload(_ context.Context, app *web.App, _ Plan, _ string) (func() error, error) {
	slots := make(chan struct{}, overloadSlots)
	app.Get("/query", func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		timer := time.NewTimer(overloadHold)
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
		<-slots
		if ctx.Err() != nil {
			return ctx.Err()
		}
		_, err := io.WriteString(w, overloadBody)
		return err
	})
	return nil, nil
}
