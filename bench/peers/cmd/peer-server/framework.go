package main

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// A framework builds the http.Handler that serves GET / for a workload. Every
// framework's handler runs inside the same net/http.Server (see newServer), so
// the frameworks differ only in routing and context handling.
type framework int

const (
	netHTTP framework = iota
	chiRouter
	ginEngine
	echoServer
)

var frameworkNames = [...]string{
	netHTTP:    "nethttp",
	chiRouter:  "chi",
	ginEngine:  "gin",
	echoServer: "echo",
}

func parseFramework(s string) (framework, error) {
	for fw, name := range frameworkNames {
		if s == name {
			return framework(fw), nil
		}
	}
	return 0, fmt.Errorf("unknown framework %q (want nethttp, chi, gin or echo)", s)
}

func (f framework) String() string { return frameworkNames[f] }

// handler returns f's handler for GET / answering with w after d.
func (f framework) handler(w workload, d time.Duration) http.Handler {
	switch f {
	case chiRouter:
		return chiHandler(w, d)
	case ginEngine:
		return ginHandler(w, d)
	case echoServer:
		return echoHandler(w, d)
	}
	return netHTTPHandler(w, d)
}

// plainHandler is the handler bare net/http and chi share: both route to a
// standard http.HandlerFunc.
func plainHandler(wl workload, d time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body := wl.respond(r.Context(), d)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, body)
	}
}
