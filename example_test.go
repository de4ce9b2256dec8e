package loom_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomrt/loom"
)

func ExampleVirtual() {
	exec := loom.Virtual(loom.WithName("jobs"))
	var wg sync.WaitGroup
	var sum atomic.Int64
	for i := 1; i <= 10; i++ {
		wg.Add(1)
		exec.Go(context.Background(), func(context.Context) {
			defer wg.Done()
			sum.Add(int64(i))
		})
	}
	wg.Wait()
	exec.Shutdown(context.Background())
	fmt.Println(sum.Load(), exec.Stats().Completed)
	// Output: 55 10
}

func ExamplePool() {
	// One worker: tasks run one at a time, in the order they were queued.
	exec := loom.Pool(1, loom.WithQueue(10))
	for i := range 3 {
		exec.Go(context.Background(), func(context.Context) { fmt.Println("task", i) })
	}
	// Run waits for its task; Shutdown waits for the queue to drain.
	exec.Run(context.Background(), func(context.Context) { fmt.Println("run") })
	exec.Shutdown(context.Background())
	// Output:
	// task 0
	// task 1
	// task 2
	// run
}

func ExampleLimit() {
	// At most 2 tasks at once and none waiting: a third is shed at once,
	// which an HTTP handler turns into a fast 503.
	exec := loom.Limit(2)
	defer exec.Shutdown(context.Background())

	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(2)
	for range 2 {
		exec.Go(context.Background(), func(context.Context) {
			started.Done()
			<-release
		})
	}
	started.Wait()
	err := exec.Go(context.Background(), func(context.Context) {})
	fmt.Println(errors.Is(err, loom.ErrRejected))
	close(release)
	// Output: true
}

func ExampleParse() {
	exec, err := loom.Parse("pool:8,queue=100,name=http")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer exec.Shutdown(context.Background())
	s := exec.Stats()
	fmt.Println(s.Kind, s.Name, s.Workers, s.QueueCapacity)

	_, err = loom.Parse("pool:x")
	fmt.Println(err)
	// Output:
	// pool http 8 100
	// parse executor spec "pool:x": workers: "x" is not a number: invalid syntax
}

// ParseSpec checks a spec, from a flag or the environment, before anything
// is built, and says what it means with the defaults filled in.
func ExampleParseSpec() {
	for _, spec := range []string{"pool:64", "limit:500,queue=100,name=db", "pool:sixty-four"} {
		s, err := loom.ParseSpec(spec)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: %s, %d workers, queue %d, %v when full\n", s, s.Kind, s.Workers, s.Queue, s.Full)
	}
	// Output:
	// pool:64: pool, 64 workers, queue 64, wait when full
	// limit:500,queue=100,name=db: limit, 500 workers, queue 100, reject when full
	// parse executor spec "pool:sixty-four": workers: "sixty-four" is not a number: invalid syntax
}

func ExampleFromEnv() {
	os.Setenv("LOOM_EXECUTOR", "limit:500")
	os.Setenv("LOOM_EXECUTOR_REPORTS", "pool:2")
	defer os.Unsetenv("LOOM_EXECUTOR")
	defer os.Unsetenv("LOOM_EXECUTOR_REPORTS")

	// http has no variable of its own and takes LOOM_EXECUTOR; reports has
	// one; a slow route's fallback comes before LOOM_EXECUTOR.
	for _, name := range []string{"http", "reports", "export"} {
		exec, err := loom.FromEnv(name, map[string]string{"export": "limit:1"}[name])
		if err != nil {
			fmt.Println(err)
			return
		}
		s := exec.Stats()
		fmt.Println(s.Name, s.Kind, s.Workers)
		exec.Shutdown(context.Background())
	}

	// A malformed spec stops the start, naming the variable.
	os.Setenv("LOOM_EXECUTOR_REPORTS", "pool:0")
	_, err := loom.FromEnv("reports", "")
	fmt.Println(err)
	// Output:
	// http limit 500
	// reports pool 2
	// export limit 1
	// LOOM_EXECUTOR_REPORTS: parse executor spec "pool:0": workers: 0 is not positive
}

func ExampleThreads() {
	// Two workers, each locked to its own OS thread for its whole life:
	// for cgo or thread-affine work. Tasks queue in order when both are busy.
	exec := loom.Threads(2, loom.WithName("cgo"))
	var mu sync.Mutex
	sum := 0
	for i := 1; i <= 4; i++ {
		exec.Go(context.Background(), func(context.Context) {
			mu.Lock()
			sum += i
			mu.Unlock()
		})
	}
	exec.Shutdown(context.Background()) // waits for the queue to drain
	s := exec.Stats()
	fmt.Println(sum, s.Kind, s.Workers, s.Completed)
	// Output: 10 threads 2 4
}

func ExampleThreadPerTask() {
	// Each task runs on a new OS thread, retired when the task returns:
	// the control experiment for "a new thread per task".
	exec := loom.ThreadPerTask()
	defer exec.Shutdown(context.Background())
	exec.Run(context.Background(), func(context.Context) { fmt.Println("on a thread of its own") })
	fmt.Println(exec.Stats().Kind, exec.Stats().Completed)
	// Output:
	// on a thread of its own
	// thread-per-task 1
}

// A limit of 10 whose queue holds up to 100 tasks, but refuses one that
// would expect to wait more than 5 ms for a slot.
func ExampleWithMaxQueueWait() {
	spec, err := loom.ParseSpec("limit:10,queue=100,maxwait=5ms")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(spec.MaxQueueWait, spec)
	e := loom.Limit(10, loom.WithQueue(100), loom.WithMaxQueueWait(5*time.Millisecond))
	defer e.Shutdown(context.Background())
	fmt.Println(e.Stats().QueueCapacity)
	// Output:
	// 5ms limit:10,queue=100,maxwait=5ms
	// 100
}
