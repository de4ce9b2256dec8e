package load_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/loomrt/loom/load"
)

func ExampleRun() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Hello World!"))
	}))
	defer srv.Close()

	res, err := load.Run(context.Background(), load.Config{
		Targets:     []load.Target{{URL: srv.URL}},
		Connections: 4,
		Requests:    100,
		ExpectBody:  []byte("Hello"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("served %d, errors %d, status 200: %d\n", res.Requests, res.Errors.Total(), res.Status[200])
	fmt.Println("p99 under a second:", res.Percentile(99) < time.Second)
	// Output:
	// served 100, errors 0, status 200: 100
	// p99 under a second: true
}

func ExampleRun_openLoop() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()

	// 200 requests per second for half a second, whatever the responses.
	res, err := load.Run(context.Background(), load.Config{
		Targets:  []load.Target{{URL: srv.URL}},
		Rate:     200,
		Duration: 500 * time.Millisecond,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s loop: %d due, %d served\n", res.Mode, res.Scheduled, res.Requests)
	// Output:
	// open loop: 100 due, 100 served
}

func ExampleResult_Merge() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()

	cfg := load.Config{Targets: []load.Target{{URL: srv.URL}}, Requests: 50}
	a, _ := load.Run(context.Background(), cfg)
	b, _ := load.Run(context.Background(), cfg) // on another machine, say
	if err := a.Merge(b); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("served", a.Requests)
	// Output:
	// served 100
}
