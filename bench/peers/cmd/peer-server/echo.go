package main

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// echoHandler routes with echo and no middleware. The Echo value is used as
// an http.Handler inside our own http.Server, never started by itself, so its
// banner and port line are hidden only to keep a stray Start quiet.
func echoHandler(wl workload, d time.Duration) http.Handler {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.GET("/", func(c echo.Context) error {
		return c.String(http.StatusOK, wl.respond(c.Request().Context(), d))
	})
	return e
}
