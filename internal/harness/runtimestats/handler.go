package runtimestats

import (
	"encoding/json"
	"net/http"
)

// Handler returns an http.Handler that answers GET and HEAD on any path
// with the JSON of Read(), and other methods with 405. It is safe for
// concurrent use and keeps no state between requests.
func Handler() http.Handler {
	return HandlerWith(nil)
}

// HandlerWith is Handler with add, if not nil, called on each snapshot
// before it is sent, to fill in figures the server keeps itself (such as
// ExecutorLimit). add must be safe for concurrent use.
func HandlerWith(add func(*Snapshot)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(w, r, add) })
}

func serve(w http.ResponseWriter, r *http.Request, add func(*Snapshot)) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "runtimestats: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	snap := Read()
	if add != nil {
		add(&snap)
	}
	body, err := json.Marshal(snap)
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
