package main

import (
	"net/http"
	"time"
)

// netHTTPHandler routes with the standard library's ServeMux; "/{$}" matches
// "/" alone, as the other frameworks' "/" routes do.
func netHTTPHandler(wl workload, d time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+wl.path(), plainHandler(wl, d))
	return mux
}
