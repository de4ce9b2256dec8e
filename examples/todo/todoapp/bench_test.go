package todoapp

import (
	"bytes"
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
					// 1 and 3, never 2: seed completed it, so that the list
					// of completed todos is never empty.
					req, _ = http.NewRequest("POST", fmt.Sprintf("%s/api/todos/%d/toggle", base, 1+2*(i%2)), nil)
				}
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				body, err := io.ReadAll(resp.Body) // all of it, so the connection is reused
				resp.Body.Close()
				// What was served, not only that something was: each
				// answer of the mix carries a todo, as in bench cask-todo.
				if err != nil || resp.StatusCode >= 300 || !bytes.Contains(body, []byte(`"id":`)) {
					b.Errorf("%s %s: status %d, body %.80q, err %v; want 2xx with a todo", req.Method, req.URL.Path, resp.StatusCode, body, err)
					return
				}
			}
		})
	})
}

// BenchmarkStoreListLarge lists the 10 completed todos of a table that also
// holds 20,000 active ones, as a long benchmark run leaves it.
func BenchmarkStoreListLarge(b *testing.B) {
	forEachBackendB(b, func(b *testing.B, store *Store) {
		bulk := "INSERT INTO todos (text, completed) SELECT 'bulk', i <= 10 FROM generate_series(1, 20010) AS s(i)"
		if store.Backend() == "sqlite" {
			bulk = "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20010) " +
				"INSERT INTO todos (text, completed) SELECT 'bulk', i <= 10 FROM s"
		}
		if _, err := store.write.ExecContext(b.Context(), bulk); err != nil {
			b.Fatal(err)
		}
		// As the database's own maintenance would, in time.
		if _, err := store.write.ExecContext(b.Context(), "ANALYZE"); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			todos, err := store.List(b.Context(), StateCompleted)
			if err != nil || len(todos) != 10 {
				b.Fatalf("got %d todos, %v; want 10", len(todos), err)
			}
		}
	})
}
