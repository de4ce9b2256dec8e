package main

import (
	"net/http"
	"time"
)

// Every framework is served by an http.Server built here, so that timeouts
// and limits are the same for all of them and the comparison measures
// routing and handler overhead only.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = maxSleep + 30*time.Second // longer than any -sleep
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = maxSleep + 5*time.Second // lets a sleeping request finish
)

func newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
	}
}
