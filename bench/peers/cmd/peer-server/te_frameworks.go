package main

import (
	"context"
	"net"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/go-chi/chi/v5"
	"github.com/gofiber/fiber/v2"
	fiberv3 "github.com/gofiber/fiber/v3"
	"github.com/labstack/echo/v4"
	"github.com/valyala/fasthttp"
)

// Each framework serves a TechEmpower workload with its own API: its
// router, its way to read the queries parameter and to write headers and
// body. The Server header names the framework.

// teHandler is an http.Handler framework's handler for a TechEmpower
// workload.
func (f framework) teHandler(wl workload, app *teApp) http.Handler {
	path := "/" + wl.String()
	switch f {
	case chiRouter:
		r := chi.NewRouter()
		r.Get(path, teStd(wl, app, "chi"))
		return r
	case ginEngine:
		gin.SetMode(gin.ReleaseMode)
		engine := gin.New()
		engine.GET(path, func(c *gin.Context) {
			body, ct, err := app.serve(c.Request.Context(), wl, c.Query("queries"))
			if err != nil {
				c.String(http.StatusInternalServerError, err.Error())
				return
			}
			c.Header("Server", "gin")
			c.Data(http.StatusOK, ct, body)
		})
		return engine
	case echoServer:
		e := echo.New()
		e.HideBanner, e.HidePort = true, true
		e.GET(path, func(c echo.Context) error {
			body, ct, err := app.serve(c.Request().Context(), wl, c.QueryParam("queries"))
			if err != nil {
				return err
			}
			c.Response().Header().Set("Server", "echo")
			return c.Blob(http.StatusOK, ct, body)
		})
		return e
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+path, teStd(wl, app, "nethttp"))
	return mux
}

// teStd is the handler bare net/http and chi share.
func teStd(wl workload, app *teApp, server string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ct, err := app.serve(r.Context(), wl, r.URL.Query().Get("queries"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h["Server"] = []string{server}
		h["Content-Type"] = []string{ct}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		_, _ = w.Write(body)
	}
}

// appServer is a server on a listener: net/http's, fasthttp's or fiber's (v2 or v3).
type appServer interface {
	Serve(l net.Listener) error
	Shutdown(ctx context.Context) error
}

// fastServer serves a handler with fasthttp, whose server is its own.
type fastServer struct{ s *fasthttp.Server }

func (f fastServer) Serve(l net.Listener) error { return f.s.Serve(l) }

func (f fastServer) Shutdown(ctx context.Context) error { return f.s.ShutdownWithContext(ctx) }

// fiberServer serves a fiber app (on fasthttp).
type fiberServer struct{ app *fiber.App }

func (f fiberServer) Serve(l net.Listener) error { return f.app.Listener(l) }

func (f fiberServer) Shutdown(ctx context.Context) error { return f.app.ShutdownWithContext(ctx) }

// fiberV3Server serves a fiber v3 app (on fasthttp).
type fiberV3Server struct{ app *fiberv3.App }

func (f fiberV3Server) Serve(l net.Listener) error {
	return f.app.Listener(l, fiberv3.ListenConfig{DisableStartupMessage: true})
}

func (f fiberV3Server) Shutdown(ctx context.Context) error { return f.app.ShutdownWithContext(ctx) }

// nativeServer builds the server of a framework that is not an
// http.Handler (fasthttp, fiber) for a workload: hello, or a TechEmpower
// test with app.
func (f framework) nativeServer(wl workload, app *teApp) appServer {
	if f == fiberV3App {
		a := fiberv3.New(fiberv3.Config{ServerHeader: "fiber",
			ReadTimeout: readTimeout, WriteTimeout: writeTimeout, IdleTimeout: idleTimeout})
		if wl == hello {
			a.Get("/", func(c fiberv3.Ctx) error { return c.SendString(helloBody) })
			return fiberV3Server{a}
		}
		a.Get("/"+wl.String(), func(c fiberv3.Ctx) error {
			body, ct, err := app.serve(c.Context(), wl, c.Query("queries"))
			if err != nil {
				return err
			}
			c.Set(fiberv3.HeaderContentType, ct)
			return c.Send(body)
		})
		return fiberV3Server{a}
	}
	if f == fiberApp {
		a := fiber.New(fiber.Config{DisableStartupMessage: true, ServerHeader: "fiber",
			ReadTimeout: readTimeout, WriteTimeout: writeTimeout, IdleTimeout: idleTimeout})
		if wl == hello {
			a.Get("/", func(c *fiber.Ctx) error { return c.SendString(helloBody) })
			return fiberServer{a}
		}
		a.Get("/"+wl.String(), func(c *fiber.Ctx) error {
			body, ct, err := app.serve(c.UserContext(), wl, c.Query("queries"))
			if err != nil {
				return err
			}
			c.Set(fiber.HeaderContentType, ct)
			return c.Send(body)
		})
		return fiberServer{a}
	}
	path := "/" + wl.String()
	if wl == hello {
		path = "/"
	}
	handler := func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) != path || !ctx.IsGet() {
			ctx.NotFound()
			return
		}
		if wl == hello {
			ctx.SetContentType("text/plain; charset=utf-8")
			ctx.SetBodyString(helloBody)
			return
		}
		body, ct, err := app.serve(ctx, wl, string(ctx.QueryArgs().Peek("queries")))
		if err != nil {
			ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
			return
		}
		ctx.SetContentType(ct)
		ctx.SetBody(body)
	}
	return fastServer{&fasthttp.Server{Handler: handler, Name: "fasthttp",
		ReadTimeout: readTimeout, WriteTimeout: writeTimeout, IdleTimeout: idleTimeout}}
}
