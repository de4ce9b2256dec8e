package task_test

import "github.com/loomrt/loom/task/tasktest"

type fakeClock = tasktest.Clock

var (
	newFakeClock = tasktest.NewClock
	waitFor      = tasktest.WaitFor
	settle       = tasktest.Settle
)
