//go:build !unix

package peers

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
