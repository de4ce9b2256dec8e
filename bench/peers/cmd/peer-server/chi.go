package main

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// chiHandler routes with chi and no middleware.
func chiHandler(wl workload, d time.Duration) http.Handler {
	r := chi.NewRouter()
	r.Get("/", plainHandler(wl, d))
	return r
}
