package main

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// A framework builds the http.Handler that serves GET / for a workload. Every
// framework's handler runs inside the same net/http.Server (see newServer), so
// the frameworks differ only in routing and context handling. The actor
// libraries are frameworks of the actor-echo workload alone, served by
// net/http's ServeMux (see actorecho.go).
type framework int

const (
	netHTTP framework = iota
	chiRouter
	ginEngine
	echoServer
	protoactorLib
	hollywoodLib
	fastHTTP
	fiberApp
	fiberV3App
)

var frameworkNames = [...]string{
	netHTTP:       "nethttp",
	chiRouter:     "chi",
	ginEngine:     "gin",
	echoServer:    "echo",
	protoactorLib: "protoactor",
	hollywoodLib:  "hollywood",
	fastHTTP:      "fasthttp",
	fiberApp:      "fiber",
	fiberV3App:    "fiber-v3",
}

func parseFramework(s string) (framework, error) {
	for fw, name := range frameworkNames {
		if s == name {
			return framework(fw), nil
		}
	}
	return 0, fmt.Errorf("unknown framework %q (want nethttp, chi, gin, echo, fasthttp, fiber, fiber-v3, protoactor or hollywood)", s)
}

func (f framework) String() string { return frameworkNames[f] }

// actors reports whether f is an actor library, which serves actor-echo.
func (f framework) actors() bool { return f == protoactorLib || f == hollywoodLib }

// native reports whether f serves with a server of its own rather than as
// an http.Handler (fasthttp, and fiber v2 and v3 on it); such a framework serves the
// hello and TechEmpower workloads.
func (f framework) native() bool { return f == fastHTTP || f == fiberApp || f == fiberV3App }

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
