package bench

import (
	"context"
	"io"
	"net/http"

	"github.com/loomrt/loom/web"
)

// pinnedBody is the answer of the pinning handler.
const pinnedBody = "held an OS thread"

// servePinning answers GET /block after holding its OS thread for the
// plan's service time in a blocking system call. Unlike time.Sleep, which
// parks only the goroutine, the thread cannot run anything else meanwhile:
// the runtime starts another thread for the other goroutines, one per
// blocked call, as it does for cgo calls and blocking drivers.
func servePinning(_ context.Context, app *web.App, p Plan, _ string) (func() error, error) {
	app.Get("/block", func(w http.ResponseWriter, _ *http.Request) error {
		blockThread(p.Service)
		_, err := io.WriteString(w, pinnedBody+" for "+p.Service.String()+"\n")
		return err
	})
	return nil, nil
}
