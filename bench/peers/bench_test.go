package peers

// The shapes mirror loom's bench_test.go exactly; keep the two in step.
//
//   - BenchmarkGo: one submitting goroutine. The b.N tasks are submitted in
//     batches of benchBatch = 1000: wg.Add(batch); batch × submit, where the
//     task calls wg.Done(); then wg.Wait(). The figure is the cost of a
//     submit plus running and completing one task, amortised over a batch.
//   - BenchmarkGoParallel: b.RunParallel; each of the GOMAXPROCS submitting
//     goroutines runs the BenchmarkGo loop with its own WaitGroup and batches
//     of benchBatch/10 = 100.
//   - BenchmarkRun: one goroutine runs a task that does nothing and waits for
//     it, b.N times: the round trip of a synchronous task.
//   - BenchmarkRunParallel: b.RunParallel, each goroutine running and waiting
//     in a loop.
//
// The task is made once, outside the timed loop, so allocs/op counts only
// what the library allocates.

import (
	"runtime"
	"sync"
	"testing"
)

const benchBatch = 1000

// eachContender runs f as a sub-benchmark kind=…/impl=… for every contender,
// with a fresh executor that is closed, untimed, at the end.
func eachContender(b *testing.B, f func(b *testing.B, e executor)) {
	for _, c := range contenders {
		b.Run("kind="+c.kind+"/impl="+c.impl, func(b *testing.B) {
			e, err := c.make()
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				b.StopTimer()
				if err := e.close(); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
			}()
			f(b, e)
		})
	}
}

func BenchmarkGo(b *testing.B) {
	eachContender(b, func(b *testing.B, e executor) {
		var wg sync.WaitGroup
		goTask, _ := e.bind(func() { wg.Done() })
		b.ReportAllocs()
		b.ResetTimer()
		for done := 0; done < b.N; {
			batch := min(benchBatch, b.N-done)
			wg.Add(batch)
			for range batch {
				if err := goTask(); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
			done += batch
		}
	})
}

func BenchmarkGoParallel(b *testing.B) {
	eachContender(b, func(b *testing.B, e executor) {
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			var wg sync.WaitGroup
			goTask, _ := e.bind(func() { wg.Done() })
			for more := true; more; {
				n := 0
				for ; n < benchBatch/10; n++ {
					if more = pb.Next(); !more {
						break
					}
					wg.Add(1)
					if err := goTask(); err != nil {
						b.Error(err)
						wg.Done()
					}
				}
				wg.Wait()
			}
		})
	})
}

func BenchmarkRun(b *testing.B) {
	eachContender(b, func(b *testing.B, e executor) {
		_, run := e.bind(func() {})
		if run == nil {
			b.Skip("no way to run one task and wait for it")
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkRunParallel(b *testing.B) {
	eachContender(b, func(b *testing.B, e executor) {
		if _, run := e.bind(func() {}); run == nil {
			b.Skip("no way to run one task and wait for it")
		}
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			_, run := e.bind(func() {})
			for pb.Next() {
				if err := run(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
