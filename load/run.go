package load

import (
	"context"
	"errors"
	"time"
)

// LateAfter is how far behind its schedule an open-loop request may start
// before it counts as late.
const LateAfter = 10 * time.Millisecond

// Run loads the targets as cfg says and returns the measurements. It blocks
// until the run ends: Requests reached, Duration over, or ctx done (then the
// result covers what finished). It returns an error only for a bad Config;
// failed requests are counted in the Result. Run is safe for concurrent use;
// every goroutine it starts has ended when it returns.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	return nil, errors.New("load: not implemented")
}
