package todoapp

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// forEachBackendB runs f as a sub-benchmark per backend.
func forEachBackendB(b *testing.B, f func(b *testing.B, store *Store)) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			f(b, be.open(b))
		})
	}
}

func BenchmarkStoreCreate(b *testing.B) {
	forEachBackendB(b, func(b *testing.B, store *Store) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := store.Create(b.Context(), "benchmark"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkStoreList(b *testing.B) {
	forEachBackendB(b, func(b *testing.B, store *Store) {
		seed(b, store)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := store.List(b.Context(), StateCompleted); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAPIMix runs the bench cask-todo mix over real HTTP from parallel
// clients: per 10 requests, 4 lists of completed todos, 2 gets, 2 creates
// and 2 toggles.
func BenchmarkAPIMix(b *testing.B) {
	forEachBackendB(b, func(b *testing.B, store *Store) {
		seed(b, store)
		base := serve(b, store)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		defer client.CloseIdleConnections()
		var n atomic.Int64
		b.ReportAllocs()
		b.SetParallelism(8) // 8 clients per CPU: requests overlap as in a server's life
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				var req *http.Request
				switch i := n.Add(1) % 10; {
				case i < 4:
					req, _ = http.NewRequest("GET", base+"/api/todos?state=completed", nil)
				case i < 6:
					req, _ = http.NewRequest("GET", base+"/api/todos/2", nil)
				case i < 8:
					req, _ = http.NewRequest("POST", base+"/api/todos", strings.NewReader(`{"text":"bench"}`))
					req.Header.Set("Content-Type", "application/json")
				default:
					req, _ = http.NewRequest("POST", fmt.Sprintf("%s/api/todos/%d/toggle", base, 1+i%2), nil)
				}
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body) // so the connection is reused
				resp.Body.Close()
				if resp.StatusCode >= 300 {
					b.Errorf("%s %s: status %d", req.Method, req.URL.Path, resp.StatusCode)
					return
				}
			}
		})
	})
}
