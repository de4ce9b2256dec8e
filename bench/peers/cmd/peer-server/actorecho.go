package main

import (
	"fmt"
	"net/http"

	"github.com/loomrt/loom/bench/peers/internal/echo"
)

// actorEchoRounds is how many batches one request runs: the same as loom
// bench's own actor-echo server, whose response body the runner expects
// from both.
const actorEchoRounds = 100

// actorEchoHandler serves GET /echo as loom bench's actor-echo server does:
// a request borrows an idle pair (waiting for one if all are busy), runs
// actorEchoRounds rounds of echo.Batch messages on it and answers with the
// messages moved, both ways counted. A pair whose request went away before
// its echo was done is not lent again.
func actorEchoHandler(pairs *echo.Pairs) http.Handler {
	idle := make(chan int, pairs.Len())
	for i := range pairs.Len() {
		idle <- i
	}
	body := fmt.Sprintf("echoed=%d\n", actorEchoRounds*echo.Batch*2)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		var pair int
		select {
		case pair = <-idle:
		case <-r.Context().Done():
			return
		}
		if err := pairs.Run(r.Context(), pair, actorEchoRounds); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		idle <- pair
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprint(w, body)
	})
	return mux
}
