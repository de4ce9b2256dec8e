package sharding

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if port := os.Getenv(natsChildEnv); port != "" {
		os.Exit(runNATSChild(port))
	}
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(runChild(name))
	}
	goleak.VerifyTestMain(m)
}
