package task_test

import (
	"context"
	"fmt"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
)

func ExampleGo() {
	exec := loom.Pool(4)
	defer exec.Shutdown(context.Background())
	ctx := context.Background()

	f := task.Go(ctx, exec, func(ctx context.Context) (string, error) {
		return "hello from a worker", nil
	})
	v, err := f.Wait(ctx)
	fmt.Println(v, err)
	// Output: hello from a worker <nil>
}

func ExampleAll() {
	exec := loom.Virtual()
	defer exec.Shutdown(context.Background())
	ctx := context.Background()

	var squares []*task.Future[int]
	for i := 1; i <= 3; i++ {
		squares = append(squares, task.Go(ctx, exec, func(context.Context) (int, error) { return i * i, nil }))
	}
	values, err := task.All(ctx, squares...)
	fmt.Println(values, err)
	// Output: [1 4 9] <nil>
}
