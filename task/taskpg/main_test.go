package taskpg_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		child()
		return
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		removeTemplate()
		os.Exit(code)
	}))
}
