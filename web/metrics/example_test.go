package metrics_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/metrics"
)

func ExampleMount() {
	app := web.MustNew(web.WithExecutor(loom.Virtual()))
	defer app.Shutdown(context.Background())
	metrics.Mount(app, "/metrics")
	app.Get("/hello", text("hi"))

	app.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/hello", nil))
	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if strings.HasPrefix(line, "loom_http_requests_total{") {
			fmt.Print(line)
		}
	}
	// Output: loom_http_requests_total{method="GET",route="GET /hello",status="200"} 1
}
