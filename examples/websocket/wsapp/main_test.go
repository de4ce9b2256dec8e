package wsapp

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that hubs, sockets and servers leave no goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
