package task_test

import (
	"context"
	"fmt"
	"time"

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

func ExampleScheduler() {
	s, err := task.NewScheduler() // jobs run on LOOM_EXECUTOR_SCHEDULER, else LOOM_EXECUTOR, else virtual
	if err != nil {
		fmt.Println(err)
		return
	}
	ran := make(chan string, 1)
	err = s.Add("report", task.At(time.Now()), func(ctx context.Context) error {
		ran <- task.JobName(ctx) // printed below: the job may run before Add returns
		return nil
	})
	fmt.Println("added:", err)
	fmt.Println("ran:", <-ran)
	fmt.Println("shutdown:", s.Shutdown(context.Background()))

	// A bad expression names the field and its value.
	fmt.Println(s.Add("nightly", task.Cron("0 25 * * *"), func(context.Context) error { return nil }))
	// Output:
	// added: <nil>
	// ran: report
	// shutdown: <nil>
	// add job "nightly": task: invalid cron expression "0 25 * * *": hour "25": segment#2: '25' out of bounds(0, 23)
}

func ExampleParseCron() {
	c, err := task.ParseCron("30 2 * * *")
	if err != nil {
		fmt.Println(err)
		return
	}
	ny, _ := time.LoadLocation("America/New_York")
	// 2:30 does not exist on 8 March 2026 in New York: the job runs at the jump.
	at := time.Date(2026, 3, 7, 12, 0, 0, 0, ny)
	for range 2 {
		at = c.Next(at, ny)
		fmt.Println(at.Format("Mon 2 Jan 15:04 MST"))
	}
	// Output:
	// Sun 8 Mar 03:00 EDT
	// Mon 9 Mar 02:30 EDT
}
