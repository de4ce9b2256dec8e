//go:build !race

// The race detector makes sync.Pool drop items and allocates on its own, so
// allocations are only counted without it.

package loom

import (
	"context"
	"sync"
	"testing"
)

// TestHotPathAllocatesNothing checks the promise of DESIGN.md: with
// context.Background, Pool's and Limit's Go and Run allocate nothing per task
// beyond the caller's closure. Nor with a context OnDrop made once, as an
// actor's mailbox turns are submitted: its task context is made once too.
func TestHotPathAllocatesNothing(t *testing.T) {
	for _, ctx := range []struct {
		name string
		ctx  context.Context
	}{
		{"background", context.Background()},
		{"ondrop", OnDrop(context.Background(), func(error) {})},
	} {
		t.Run(ctx.name, func(t *testing.T) { hotPathAllocatesNothing(t, ctx.ctx) })
	}
}

func hotPathAllocatesNothing(t *testing.T, ctx context.Context) {
	for _, tc := range []struct {
		kind string
		make func() Executor
	}{
		{"pool", func() Executor { return Pool(4) }},
		{"limit", func() Executor { return Limit(4, WithFull(FullWait)) }},
	} {
		for _, method := range []string{"Go", "Run"} {
			t.Run(tc.kind+"/"+method, func(t *testing.T) {
				e := tc.make()
				defer shutdown(t, e)
				var wg sync.WaitGroup
				task := Task(func(context.Context) { wg.Done() })
				submit := e.Go
				if method == "Run" {
					submit = e.Run
				}
				allocs := testing.AllocsPerRun(1000, func() {
					wg.Add(1)
					if err := submit(ctx, task); err != nil {
						t.Fatal(err)
					}
					wg.Wait()
				})
				if allocs != 0 {
					t.Errorf("%s allocates %v times per task; want 0", method, allocs)
				}
			})
		}
	}
}
