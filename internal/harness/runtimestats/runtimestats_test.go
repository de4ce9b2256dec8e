package runtimestats_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/loomrt/loom/internal/harness/runtimestats"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestReadSeesThisProcess(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	const extra = 50
	for range extra {
		go func() {
			started <- struct{}{}
			<-release
		}()
	}
	for range extra {
		<-started
	}
	snap := runtimestats.Read()
	close(release)

	if snap.Goroutines < extra {
		t.Errorf("Goroutines = %d; want at least %d", snap.Goroutines, extra)
	}
	if snap.GoroutinesCreated < extra {
		t.Errorf("GoroutinesCreated = %d; want at least %d", snap.GoroutinesCreated, extra)
	}
	if snap.Threads < 1 {
		t.Errorf("Threads = %d; want at least 1", snap.Threads)
	}
	if snap.GOMAXPROCS < 1 {
		t.Errorf("GOMAXPROCS = %d; want at least 1", snap.GOMAXPROCS)
	}
	if snap.TotalBytes == 0 || snap.HeapObjectsBytes == 0 {
		t.Errorf("TotalBytes = %d, HeapObjectsBytes = %d; want both > 0", snap.TotalBytes, snap.HeapObjectsBytes)
	}
}

func TestHandlerServesJSON(t *testing.T) {
	srv := httptest.NewServer(runtimestats.Handler())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/anything")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d; want 200", resp.StatusCode)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q; want application/json", got)
	}
	var raw map[string]uint64
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"goroutines", "goroutines_not_in_go", "threads", "gc_cycles", "heap_live_bytes"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("JSON has no %q key: %v", key, raw)
		}
	}
	if raw["threads"] == 0 {
		t.Errorf("threads = 0; want > 0")
	}
}

func TestHandlerRejectsOtherMethods(t *testing.T) {
	rec := httptest.NewRecorder()
	runtimestats.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST status = %d; want 405", rec.Code)
	}
	rec = httptest.NewRecorder()
	runtimestats.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD status = %d, body %d bytes; want 200 and empty", rec.Code, rec.Body.Len())
	}
}

func TestFetch(t *testing.T) {
	srv := httptest.NewServer(runtimestats.Handler())
	defer srv.Close()

	snap, err := runtimestats.Fetch(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Goroutines == 0 || snap.Threads == 0 {
		t.Errorf("Fetch = %+v; want goroutines and threads > 0", snap)
	}
}

func TestFetchErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("not json"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tests := []struct {
		path      string
		wantIs    error
		wantMatch string
	}{
		{path: "/missing", wantIs: runtimestats.ErrStatus, wantMatch: "404"},
		{path: "/garbage", wantMatch: "decode"},
	}
	for _, tt := range tests {
		_, err := runtimestats.Fetch(context.Background(), srv.URL+tt.path)
		if err == nil {
			t.Errorf("Fetch(%s) = nil error; want one", tt.path)
			continue
		}
		if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
			t.Errorf("Fetch(%s) = %v; want errors.Is %v", tt.path, err, tt.wantIs)
		}
		if !strings.Contains(err.Error(), tt.wantMatch) {
			t.Errorf("Fetch(%s) = %q; want it to mention %q", tt.path, err, tt.wantMatch)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := runtimestats.Fetch(ctx, srv.URL+"/missing"); !errors.Is(err, context.Canceled) {
		t.Errorf("Fetch with cancelled ctx = %v; want context.Canceled", err)
	}
}

func TestHandlerWithAddsServerFigures(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Handler
		want uint64
	}{
		{"Handler", runtimestats.Handler(), 0},
		{"HandlerWith", runtimestats.HandlerWith(func(s *runtimestats.Snapshot) { s.ExecutorLimit = 17 }), 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tc.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			var snap runtimestats.Snapshot
			if err := json.Unmarshal(rec.Body.Bytes(), &snap); err != nil {
				t.Fatal(err)
			}
			if snap.ExecutorLimit != tc.want || snap.Goroutines == 0 {
				t.Errorf("snapshot %+v; want executor limit %d and the runtime's figures", snap, tc.want)
			}
		})
	}
}
