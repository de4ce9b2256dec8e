// Package runtimestats exposes a process's Go runtime figures — goroutines,
// goroutines blocked outside Go, OS threads, GC cycles, heap — as JSON, so
// that a benchmark runner can sample a server under test from outside.
//
// A server under test serves Handler on a listener of its own, apart from the
// traffic it is measured on, and the runner polls it with Fetch:
//
//	srv := &http.Server{Addr: "127.0.0.1:9090", Handler: runtimestats.Handler()}
//	go srv.ListenAndServe()
//	defer srv.Close() // ends the goroutine above
//
//	snap, err := runtimestats.Fetch(ctx, "http://127.0.0.1:9090/")
//	fmt.Println(snap.Goroutines, snap.Threads)
//
// Every figure comes from runtime/metrics, which reads them without stopping
// the world, so polling every 100 ms costs the server almost nothing.
package runtimestats

import (
	"runtime/metrics"
)

// Snapshot is one reading of the runtime's figures. Its JSON form is what
// Handler serves and Fetch decodes.
type Snapshot struct {
	// Goroutines is the number of live goroutines
	// (/sched/goroutines:goroutines).
	Goroutines uint64 `json:"goroutines"`
	// GoroutinesNotInGo is the approximate number of goroutines in a system
	// call or a cgo call (/sched/goroutines/not-in-go:goroutines): each one
	// holds an OS thread.
	GoroutinesNotInGo uint64 `json:"goroutines_not_in_go"`
	// GoroutinesCreated counts goroutines created since the process started
	// (/sched/goroutines-created:goroutines).
	GoroutinesCreated uint64 `json:"goroutines_created"`
	// Threads is the number of live OS threads the Go runtime owns
	// (/sched/threads/total:threads).
	Threads uint64 `json:"threads"`
	// GOMAXPROCS is the current GOMAXPROCS setting
	// (/sched/gomaxprocs:threads).
	GOMAXPROCS uint64 `json:"gomaxprocs"`
	// GCCycles counts completed GC cycles (/gc/cycles/total:gc-cycles).
	GCCycles uint64 `json:"gc_cycles"`
	// HeapLiveBytes is the heap marked live by the last GC
	// (/gc/heap/live:bytes).
	HeapLiveBytes uint64 `json:"heap_live_bytes"`
	// HeapObjectsBytes is the heap occupied by objects, live or not yet swept
	// (/memory/classes/heap/objects:bytes).
	HeapObjectsBytes uint64 `json:"heap_objects_bytes"`
	// TotalBytes is all memory the runtime has mapped read-write
	// (/memory/classes/total:bytes).
	TotalBytes uint64 `json:"total_bytes"`
	// ExecutorLimit is the current limit of the server's adaptive executor,
	// when the server reports one (HandlerWith); 0 otherwise. Not a
	// runtime figure: Read leaves it 0.
	ExecutorLimit uint64 `json:"executor_limit,omitempty"`
	// ExecutorRunning, ExecutorQueued, ExecutorRejected and ExecutorExpired
	// are the server's executor Stats (Running, Queued, Rejected, Expired),
	// when the server reports them (HandlerWith); 0 otherwise.
	ExecutorRunning  uint64 `json:"executor_running,omitempty"`
	ExecutorQueued   uint64 `json:"executor_queued,omitempty"`
	ExecutorRejected uint64 `json:"executor_rejected,omitempty"`
	ExecutorExpired  uint64 `json:"executor_expired,omitempty"`
}

// names lists the metrics Read takes, in the order of the fields they fill.
var names = [...]string{
	"/sched/goroutines:goroutines",
	"/sched/goroutines/not-in-go:goroutines",
	"/sched/goroutines-created:goroutines",
	"/sched/threads/total:threads",
	"/sched/gomaxprocs:threads",
	"/gc/cycles/total:gc-cycles",
	"/gc/heap/live:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/total:bytes",
}

// Read returns the current figures of this process. It is safe for
// concurrent use. A metric the running Go version does not know reads as 0.
func Read() Snapshot {
	var samples [len(names)]metrics.Sample
	for i, name := range names {
		samples[i].Name = name
	}
	metrics.Read(samples[:])
	value := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	return Snapshot{
		Goroutines:        value(0),
		GoroutinesNotInGo: value(1),
		GoroutinesCreated: value(2),
		Threads:           value(3),
		GOMAXPROCS:        value(4),
		GCCycles:          value(5),
		HeapLiveBytes:     value(6),
		HeapObjectsBytes:  value(7),
		TotalBytes:        value(8),
	}
}
