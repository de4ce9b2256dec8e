//go:build !linux

package main

import (
	"runtime"
	"time"
)

// blockThread holds the calling OS thread for d. Without a raw nanosleep,
// it locks the goroutine to its thread for the wait; the thread is held
// just the same.
func blockThread(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	time.Sleep(d)
}
