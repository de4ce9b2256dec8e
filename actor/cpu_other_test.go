//go:build !unix

package actor

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
