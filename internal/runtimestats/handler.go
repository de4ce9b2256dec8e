package runtimestats

import (
	"encoding/json"
	"net/http"
)

// Handler returns an http.Handler that answers GET and HEAD on any path
// with the JSON of Read(), and other methods with 405. It is safe for
// concurrent use and keeps no state between requests.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

func serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "runtimestats: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := json.Marshal(Read())
	if err != nil {
		// A struct of integers always marshals; this guards against a
		// future field that does not.
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(append(body, '\n'))
}
