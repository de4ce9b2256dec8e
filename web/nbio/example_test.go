package nbio_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/loomrt/loom/web"
	"github.com/loomrt/loom/web/nbio"
)

// An App served on the nbio engine: the same App, routes and executors as on
// net/http. Importing web/nbio also lets LOOM_ENGINE=nbio choose it.
func ExampleEngine() {
	app := web.MustNew(web.WithEngine(nbio.Engine()), web.WithoutThreadWatch())
	app.Get("/hello/{name}", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "hello "+web.Param(r, "name").String())
		return err
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.Serve(ctx, ln) }()

	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Get("http://" + ln.Addr().String() + "/hello/ada")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(app.EngineName(), resp.StatusCode, string(b))
	}
	tr.CloseIdleConnections()
	stop()
	fmt.Println("served:", <-served)
	// Output:
	// nbio 200 hello ada
	// served: <nil>
}
