package task_test

import (
	"context"
	"testing"
	"time"

	"github.com/loomrt/loom"
	"github.com/loomrt/loom/task"
)

func BenchmarkCronNext(b *testing.B) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	for _, expr := range []string{"*/15 * * * *", "30 2 * * *", "0 0 L * *", "0 0 29 2 *"} {
		b.Run(expr, func(b *testing.B) {
			c, err := task.ParseCron(expr)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			at := time.Date(2026, 3, 8, 0, 0, 0, 0, ny)
			for b.Loop() {
				c.Next(at, ny)
			}
		})
	}
}

func BenchmarkParseCron(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := task.ParseCron("0 9 * * MON-FRI"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGo is task.Go and Wait of a function that returns at once, on
// virtual, with no Tracer set.
func BenchmarkGo(b *testing.B) {
	exec := loom.Virtual()
	defer exec.Shutdown(context.Background())
	ctx := context.Background()
	fn := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	for b.Loop() {
		if v, err := task.Go(ctx, exec, fn).Wait(ctx); v != 1 || err != nil {
			b.Fatalf("got %d, %v; want 1, nil", v, err)
		}
	}
}
