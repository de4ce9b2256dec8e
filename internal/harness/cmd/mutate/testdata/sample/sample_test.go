package sample

import "testing"

func TestAccept(t *testing.T) {
	for n, want := range map[int]bool{0: false, 5: true, 10: true, 11: false} {
		if got := Accept(n, "a"); got != want {
			t.Errorf("Accept(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestEither(t *testing.T) {
	if !Either(true, false) || Either(false, false) {
		t.Error("Either is not a || b")
	}
}

func TestSize(t *testing.T) {
	if got := Size(0); got != 4 {
		t.Errorf("Size(0) = %d, want 4", got)
	}
}

func TestCount(t *testing.T) {
	if got := Count(3, -1); got != 3 {
		t.Errorf("Count(3, -1) = %d, want 3", got)
	}
}

func TestShift(t *testing.T) {
	if got := Shift(1); got != 1 {
		t.Errorf("Shift(1) = %d", got)
	}
}
