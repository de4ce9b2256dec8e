package todoapp

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: every store,
// App and server a test opens must be closed by its cleanup.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
