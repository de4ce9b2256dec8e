package loom

// Benchmark shapes. bench/peers mirrors them exactly for ants, pond, errgroup
// and semaphore, so keep the two in step.
//
// Sizes: every bounded executor gets benchWorkers = 64 workers (Pool,
// Threads) or a limit of 64 (Limit), with its default queue, except that
// Limit uses WithFull(FullWait) so that a full executor blocks the submitter as
// errgroup.SetLimit and ants do; Adaptive keeps all its defaults (a limit of
// 10,000 the benchmarks never reach). The context is context.Background(). The
// task is made once, outside the timed loop, so allocs/op counts only what
// the executor allocates.
//
//   - BenchmarkGo/<kind>: one submitting goroutine. The b.N tasks are submitted
//     in batches of benchBatch = 1000: wg.Add(batch); batch × e.Go(ctx, task)
//     where task calls wg.Done(); then wg.Wait(). The figure is the cost of
//     Go plus running and completing one task, amortised over a batch.
//   - BenchmarkGoParallel/<kind>: b.RunParallel; each of the GOMAXPROCS
//     submitting goroutines runs the BenchmarkGo loop with its own WaitGroup
//     and batches of benchBatch/10 = 100.
//   - BenchmarkRun/<kind>: one goroutine calls e.Run(ctx, task) b.N times;
//     the task does nothing. The figure is the round trip of a synchronous task.
//   - BenchmarkRunParallel/<kind>: b.RunParallel, each goroutine calling
//     e.Run(ctx, task) in a loop.
//   - BenchmarkThreadWatch/<Go|Run>/<kind>/watch=<on|off>: the BenchmarkGo
//     and BenchmarkRun loops of virtual and limit with a ThreadWatch running
//     (each task takes a unit of the thread budget, and the executor reads
//     the thread counts when it has spent the allowance) or none.
//   - BenchmarkStatsSampling: the Limit BenchmarkRun loop with no task timed,
//     one in 32 timed (as shipped), every task timed, and every task timed with the mean run time
// kept for WithMaxQueueWait. to show what the
//     latency histograms cost.
//
// Run them with: go test -run '^$' -bench . -benchtime=200000x -count 1 .

import (
	"context"
	"runtime"
	"sync"
	"testing"
)

const (
	benchWorkers = 64
	benchBatch   = 1000
)

var benchExecutors = []struct {
	kind string
	make func() Executor
}{
	{"virtual", func() Executor { return Virtual() }},
	{"pool", func() Executor { return Pool(benchWorkers) }},
	{"threads", func() Executor { return Threads(benchWorkers) }},
	{"thread-per-task", func() Executor { return ThreadPerTask() }},
	{"limit", func() Executor { return Limit(benchWorkers, WithFull(FullWait)) }},
	// Adaptive with its defaults: below its limit of 10,000, what it costs
	// over Virtual is its bookkeeping.
	{"adaptive", func() Executor { return Adaptive() }},
}

func BenchmarkGo(b *testing.B) {
	for _, be := range benchExecutors {
		b.Run(be.kind, func(b *testing.B) {
			benchGo(b, be.make())
		})
	}
}

// benchGo submits b.N empty tasks to e with Go, in batches of benchBatch
// that it waits for, then shuts e down.
func benchGo(b *testing.B, e Executor) {
	defer benchShutdown(b, e)
	ctx := context.Background()
	var wg sync.WaitGroup
	task := func(context.Context) { wg.Done() }
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		batch := min(benchBatch, b.N-done)
		wg.Add(batch)
		for range batch {
			if err := e.Go(ctx, task); err != nil {
				b.Fatal(err)
			}
		}
		wg.Wait()
		done += batch
	}
}

// benchRun runs b.N empty tasks on e with Run, then shuts e down.
func benchRun(b *testing.B, e Executor) {
	defer benchShutdown(b, e)
	ctx := context.Background()
	task := func(context.Context) {}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := e.Run(ctx, task); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGoParallel(b *testing.B) {
	for _, be := range benchExecutors {
		b.Run(be.kind, func(b *testing.B) {
			e := be.make()
			defer benchShutdown(b, e)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var wg sync.WaitGroup
				task := func(context.Context) { wg.Done() }
				for more := true; more; {
					n := 0
					for ; n < benchBatch/10; n++ {
						if more = pb.Next(); !more {
							break
						}
						wg.Add(1)
						if err := e.Go(ctx, task); err != nil {
							b.Error(err)
							wg.Done()
						}
					}
					wg.Wait()
				}
			})
		})
	}
}

func BenchmarkThreadWatch(b *testing.B) {
	for _, kind := range []string{"virtual", "limit"} {
		for _, watch := range []string{"off", "on"} {
			make := benchExecutors[0].make
			if kind == "limit" {
				make = benchExecutors[4].make
			}
			start := func(b *testing.B) {
				if watch == "off" {
					return
				}
				w := &ThreadWatch{}
				if err := w.Start(); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { w.Close() })
			}
			b.Run("Go/"+kind+"/watch="+watch, func(b *testing.B) {
				start(b)
				benchGo(b, make())
			})
			b.Run("Run/"+kind+"/watch="+watch, func(b *testing.B) {
				start(b)
				benchRun(b, make())
			})
		}
	}
}

func BenchmarkRun(b *testing.B) {
	for _, be := range benchExecutors {
		b.Run(be.kind, func(b *testing.B) {
			benchRun(b, be.make())
		})
	}
}

func BenchmarkRunParallel(b *testing.B) {
	for _, be := range benchExecutors {
		b.Run(be.kind, func(b *testing.B) {
			e := be.make()
			defer benchShutdown(b, e)
			ctx := context.Background()
			task := func(context.Context) {}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := e.Run(ctx, task); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func benchShutdown(b *testing.B, e Executor) {
	b.StopTimer()
	if err := e.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
}

// BenchmarkStatsSampling runs the Limit BenchmarkRun loop (the cheapest
// path, where the clock would weigh most) with no task timed, one in 32 timed
// (as shipped), every task timed, and every task timed with the mean run time
// kept for WithMaxQueueWait.
func BenchmarkStatsSampling(b *testing.B) {
	for _, variant := range []struct {
		name    string
		untimed bool
		shift   uint
	}{
		{"untimed", true, sampleShift},
		{"sampled-1-in-32", false, sampleShift},
		{"every-task", false, 64},
		{"max-queue-wait", false, 64}, // every task timed, and the mean kept
	} {
		b.Run(variant.name, func(b *testing.B) {
			p := Limit(benchWorkers, WithFull(FullWait)).(*limit)
			if variant.name == "max-queue-wait" {
				p = Limit(benchWorkers, WithQueue(1), WithMaxQueueWait(1<<30)).(*limit)
			}
			p.untimed, p.sampleShift = variant.untimed, variant.shift
			defer benchShutdown(b, p)
			ctx := context.Background()
			task := func(context.Context) {}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := p.Run(ctx, task); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRunCancellableContext is BenchmarkRun with a submit context that
// can be cancelled, as an HTTP request's is: the executor then derives a
// context per task so that Shutdown can cancel it.
func BenchmarkRunCancellableContext(b *testing.B) {
	for _, be := range benchExecutors {
		if be.kind == "threads" || be.kind == "thread-per-task" {
			continue // dominated by thread switches; nothing to learn here
		}
		b.Run(be.kind, func(b *testing.B) {
			e := be.make()
			defer benchShutdown(b, e)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			task := func(context.Context) {}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := e.Run(ctx, task); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
