package peers

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that every executor a test or benchmark made is gone when
// it ends. ants starts a default pool of its own when imported and never
// stops it; IgnoreCurrent excuses those goroutines, and only those.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
