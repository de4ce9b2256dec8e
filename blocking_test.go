package loom

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/osthreads"
)

// withBlockingLimit sets Blocking's bound for one test and puts the default
// back after it.
func withBlockingLimit(t *testing.T, n int, full FullPolicy) {
	t.Helper()
	SetBlockingLimit(n, full)
	t.Cleanup(func() { SetBlockingLimit(0, FullWait) })
}

// holdBlocking starts n calls of Blocking whose fn waits for release, and
// waits until all n are inside fn.
func holdBlocking(t *testing.T, n int) (release func()) {
	t.Helper()
	inside := make(chan struct{})
	gate := make(chan struct{})
	done := make(chan error, n)
	for range n {
		go func() {
			done <- Blocking(context.Background(), func() {
				inside <- struct{}{}
				<-gate
			})
		}()
	}
	for range n {
		<-inside
	}
	return func() {
		close(gate)
		for range n {
			if err := <-done; err != nil {
				t.Errorf("Blocking = %v; want nil", err)
			}
		}
	}
}

func TestBlockingBound(t *testing.T) {
	for _, full := range []FullPolicy{FullWait, FullReject} {
		t.Run(full.String(), func(t *testing.T) {
			withBlockingLimit(t, 3, full)
			release := holdBlocking(t, 3) // exactly at the bound: all three run
			if limit, running := BlockingLimit(); limit != 3 || running != 3 {
				t.Errorf("BlockingLimit() = %d, %d; want 3, 3", limit, running)
			}
			// One past the bound: rejected, or waits until its context ends.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			called := false
			err := Blocking(ctx, func() { called = true })
			want := ErrRejected
			if full == FullWait {
				want = context.DeadlineExceeded
			}
			if !errors.Is(err, want) || called {
				t.Errorf("fourth Blocking = %v, fn called %v; want %v, not called", err, called, want)
			}
			release()
			if _, running := BlockingLimit(); running != 0 {
				t.Errorf("running %d after release; want 0", running)
			}
		})
	}
}

func TestBlockingWaitsItsTurn(t *testing.T) {
	withBlockingLimit(t, 1, FullWait)
	release := holdBlocking(t, 1)
	result := make(chan error)
	ran := make(chan struct{})
	go func() { result <- Blocking(context.Background(), func() { close(ran) }) }()
	select {
	case <-ran:
		t.Fatal("fn ran while the bound was full")
	case <-time.After(10 * time.Millisecond):
	}
	release()
	<-ran
	if err := <-result; err != nil {
		t.Errorf("Blocking = %v; want nil", err)
	}
}

func TestBlockingEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	if err := Blocking(ctx, func() { called = true }); !errors.Is(err, context.Canceled) || called {
		t.Errorf("Blocking(cancelled) = %v, fn called %v; want context.Canceled, not called", err, called)
	}
}

func TestBlockingPanicFreesItsPlace(t *testing.T) {
	withBlockingLimit(t, 1, FullReject)
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Errorf("recovered %v; want the panic to reach the caller", v)
			}
		}()
		_ = Blocking(context.Background(), func() { panic("boom") })
	}()
	if err := Blocking(context.Background(), func() {}); err != nil {
		t.Errorf("Blocking after a panic = %v; want nil (place freed)", err)
	}
}

func TestBlockingDefaultIsHalfTheThreadLimit(t *testing.T) {
	SetBlockingLimit(0, FullWait)
	if got, want := func() int { l, _ := BlockingLimit(); return l }(), osthreads.MaxThreads()/2; got != want {
		t.Errorf("default bound %d; want half the thread limit, %d", got, want)
	}
}

func TestSetBlockingLimitPanics(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		full FullPolicy
	}{{"negative", -1, FullWait}, {"no policy", 1, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("SetBlockingLimit(%d, %v) did not panic", tt.n, tt.full)
				}
			}()
			SetBlockingLimit(tt.n, tt.full)
		})
	}
}

// TestBlockingBoundMadeOnFirstUse checks the lazy default of Blocking's
// bound: with none set, the first use makes one (half the thread limit) and
// later uses get the same one. (blocking.go, currentBlocking's fast path.)
func TestBlockingBoundMadeOnFirstUse(t *testing.T) {
	old := blockingNow.Load()
	t.Cleanup(func() { blockingNow.Store(old) })
	blockingNow.Store(nil)
	b := currentBlocking()
	if b == nil {
		t.Fatal("currentBlocking() with no bound set: got nil; want the default bound")
	}
	if b.limit != defaultBlockingLimit() {
		t.Errorf("default bound: got %d; want %d", b.limit, defaultBlockingLimit())
	}
	if again := currentBlocking(); again != b {
		t.Errorf("second currentBlocking(): got another bound (%p); want the first (%p)", again, b)
	}
}
