package remote

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loomrt/loom/actor"
)

func TestLookupRegisteredName(t *testing.T) {
	ns := startNATS(t)
	a, b, c := join(t, ns, "a"), join(t, ns, "b"), join(t, ns, "c")
	echoRef := spawn(t, b.System(), "echo", echo)
	if err := b.Register("greeter", echoRef); err != nil {
		t.Fatal(err)
	}
	if err := b.Register("greeter", echoRef); !errors.Is(err, ErrInvalid) {
		t.Errorf("second Register = %v; want ErrInvalid", err)
	}
	waitMembers(t, a, "b", "c")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ref, err := a.Lookup(ctx, "greeter")
	if err != nil {
		t.Fatal(err)
	}
	if ref != a.Ref("b", "/echo") {
		t.Errorf("Lookup = %v; want /echo@b", ref)
	}
	if got, err := actor.Ask[string](ctx, ref, "hi"); err != nil || got != "hi" {
		t.Errorf("Ask = %q, %v", got, err)
	}
	if local, err := b.Lookup(ctx, "greeter"); err != nil || local != echoRef {
		t.Errorf("Lookup on b = %v, %v; want the local %v", local, err, echoRef)
	}
	// Every node answers: a miss is known once all have, not at ctx's end.
	_ = c
	start := time.Now()
	if _, err := a.Lookup(ctx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Lookup(nobody) = %v; want ErrNotFound", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a miss took %v", d)
	}
	echoRef.Stop()
	<-echoRef.Done()
	if _, err := a.Lookup(ctx, "greeter"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Lookup of a stopped actor = %v; want ErrNotFound", err)
	}
}

func TestSpawnOnByKind(t *testing.T) {
	ns := startNATS(t)
	a, b := join(t, ns, "a"), join(t, ns, "b")
	if err := b.RegisterKind("echo", actor.Props{New: func() actor.Actor { return actor.ReceiveFunc(echo) }}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ref, err := a.SpawnOn(ctx, "b", "echo", "e1")
	if err != nil {
		t.Fatal(err)
	}
	if ref.String() != "/e1@b" {
		t.Errorf("SpawnOn = %v; want /e1@b", ref)
	}
	if got, err := actor.Ask[string](ctx, ref, "hi"); err != nil || got != "hi" {
		t.Errorf("Ask = %q, %v", got, err)
	}
	if _, err := b.System().Lookup("/e1"); err != nil {
		t.Errorf("e1 not on b: %v", err)
	}
	for _, tc := range []struct{ node, kind, name string }{
		{"b", "nope", "x"},
		{"zz", "echo", "x"},
	} {
		if _, err := a.SpawnOn(ctx, tc.node, tc.kind, tc.name); !errors.Is(err, ErrNotFound) {
			t.Errorf("SpawnOn(%s, %s) = %v; want ErrNotFound", tc.node, tc.kind, err)
		}
	}
	if _, err := a.SpawnOn(ctx, "b", "echo", "e1"); err == nil {
		t.Error("SpawnOn of a taken name succeeded")
	}
}
