package loom_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/loomrt/loom"
)

func ExampleVirtual() {
	exec := loom.Virtual(loom.Name("jobs"))
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
	exec := loom.Pool(1, loom.Queue(10))
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
	// parse executor spec "pool:x": workers: strconv.Atoi: parsing "x": invalid syntax
}

func ExampleFromEnv() {
	os.Setenv("LOOM_EXECUTOR", "limit:500")
	os.Setenv("LOOM_EXECUTOR_REPORTS", "pool:2")
	defer os.Unsetenv("LOOM_EXECUTOR")
	defer os.Unsetenv("LOOM_EXECUTOR_REPORTS")

	for _, name := range []string{"http", "reports"} {
		exec, err := loom.FromEnv(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		s := exec.Stats()
		fmt.Println(s.Name, s.Kind, s.Workers)
		exec.Shutdown(context.Background())
	}
	// Output:
	// http limit 500
	// reports pool 2
}

// ValidateSpec checks a spec, from a flag or the environment, before
// anything is built.
func ExampleValidateSpec() {
	for _, spec := range []string{"pool:64,queue=1000", "pool:sixty-four"} {
		if err := loom.ValidateSpec(spec); err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(spec, "is valid")
	}
	// Output:
	// pool:64,queue=1000 is valid
	// parse executor spec "pool:sixty-four": workers: strconv.Atoi: parsing "sixty-four": invalid syntax
}
