package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// ErrEngine is matched by the error New returns when LOOM_ENGINE names an
// engine that does not exist or that the program does not link in.
var ErrEngine = errors.New("unknown connection engine")

// EngineEnv is the environment variable that chooses the connection engine
// of an App made without WithEngine: "std" (or unset) for net/http,
// or the name of an engine registered with RegisterEngine ("nbio", by
// importing github.com/loomrt/loom/web/nbio).
const EngineEnv = "LOOM_ENGINE"

// An Engine owns an App's connections: it accepts them, parses requests
// and hands each to the App (an http.Handler), which runs it on its route's
// executor. The default engine is net/http's; web/nbio provides an
// event-loop one. Serve calls NewServer once per serve.
type Engine interface {
	// Name is the engine's name in LOOM_ENGINE and in logs.
	Name() string
	// NewServer returns a server for srv.Handler that honours srv's
	// limits (ReadHeaderTimeout, IdleTimeout, MaxHeaderBytes, ErrorLog)
	// and s, or an error naming what it cannot honour.
	NewServer(srv *http.Server, s EngineSettings) (EngineServer, error)
}

// EngineSettings are the App's settings an engine needs besides the
// http.Server's.
type EngineSettings struct {
	WriteTimeout time.Duration // the App's WithWriteTimeout; 0: none
	// BodyTimeout is the longest WithBodyTimeout of the App and its groups and
	// routes (0: none), for an engine that reads a whole body before the
	// request is routed: it cannot tell whose timeout applies.
	BodyTimeout time.Duration
	BodyLimit   int64 // the largest body limit of any route; 0: none
	Logger      *slog.Logger
	// OnShutdown is called when Shutdown begins, as net/http calls the
	// functions given to http.Server.RegisterOnShutdown: it ends the App's
	// long-lived handlers (Hold), which Shutdown would otherwise wait for.
	OnShutdown func()
}

// An EngineServer serves until Shutdown or Close, as an http.Server does:
// Serve blocks and returns http.ErrServerClosed after either; Shutdown
// stops accepting, waits for requests in flight until ctx ends (then it
// returns ctx's error) and closes idle connections; Close closes all.
type EngineServer interface {
	Serve(ln net.Listener) error
	Shutdown(ctx context.Context) error
	Close() error
}

var engines = struct {
	sync.Mutex
	byName map[string]Engine
}{byName: map[string]Engine{}}

// RegisterEngine makes e available to LOOM_ENGINE under e.Name(). Engine
// packages call it from init. Registering "std" or a name twice panics.
func RegisterEngine(e Engine) {
	engines.Lock()
	defer engines.Unlock()
	name := e.Name()
	if _, dup := engines.byName[name]; dup || name == "std" || name == "" {
		panic(fmt.Sprintf("web: RegisterEngine: engine name %q already taken", name))
	}
	engines.byName[name] = e
}

// knownEngines is what LOOM_ENGINE may name, and what must be imported
// for the engines not linked in.
var knownEngines = map[string]string{"std": "", "nbio": "github.com/loomrt/loom/web/nbio"}

// engineFromEnv returns the engine LOOM_ENGINE names, nil for std.
func engineFromEnv() (Engine, error) {
	name := strings.TrimSpace(os.Getenv(EngineEnv))
	e, err := LookupEngine(name)
	if err != nil {
		return nil, fmt.Errorf("web: %s=%q: %w", EngineEnv, name, err)
	}
	return e, nil
}

// LookupEngine returns the engine LOOM_ENGINE=name would choose: nil for
// "std" or "" (net/http, an App's default), a registered engine by its
// name, or an error matching ErrEngine that says what to import for a known
// engine the program does not link, or lists the known names otherwise.
func LookupEngine(name string) (Engine, error) {
	if name == "" || name == "std" {
		return nil, nil
	}
	engines.Lock()
	e, ok := engines.byName[name]
	engines.Unlock()
	if ok {
		return e, nil
	}
	if pkg, known := knownEngines[name]; known {
		return nil, fmt.Errorf("%w %q: not linked in (import _ %q)", ErrEngine, name, pkg)
	}
	names := make([]string, 0, len(knownEngines))
	for n := range knownEngines {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("%w %q (want one of %s)", ErrEngine, name, strings.Join(names, ", "))
}

// WithEngine serves the App on e instead of the engine LOOM_ENGINE names
// (net/http's when it is unset). It applies to New.
func WithEngine(e Engine) AppOption {
	if e == nil {
		panic("web: WithEngine(nil)")
	}
	return appOption(func(a *appSettings) { a.engine = e })
}

// EngineName is the name of the engine Serve uses: "std" or a registered
// engine's.
func (a *App) EngineName() string {
	if a.settings.engine == nil {
		return "std"
	}
	return a.settings.engine.Name()
}
