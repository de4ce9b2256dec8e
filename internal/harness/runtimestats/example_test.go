package runtimestats_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/loomrt/loom/internal/harness/runtimestats"
)

// A server under test serves Handler on its own listener; the runner reads
// it with Fetch.
func Example() {
	metricsServer := httptest.NewServer(runtimestats.Handler())
	defer metricsServer.Close()

	snap, err := runtimestats.Fetch(context.Background(), metricsServer.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("goroutines > 0:", snap.Goroutines > 0)
	fmt.Println("threads > 0:", snap.Threads > 0)
	// Output:
	// goroutines > 0: true
	// threads > 0: true
}
