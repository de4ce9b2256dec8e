package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// mainEnv, set in a child's environment, makes the test binary behave as
// the loom command: `loom bench` re-executes its own binary to start each
// server under test, and in tests its own binary is this one.
const mainEnv = "LOOM_CMD_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
