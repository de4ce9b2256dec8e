package main

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// ginHandler routes with gin in release mode and without gin.Default's
// logger and recovery middleware: net/http already recovers handler panics,
// and a logger would measure the terminal, not the framework.
func ginHandler(wl workload, d time.Duration) http.Handler {
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.GET("/", func(c *gin.Context) {
		c.String(http.StatusOK, wl.respond(c.Request.Context(), d))
	})
	return engine
}
