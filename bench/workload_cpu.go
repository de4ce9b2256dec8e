package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/loomrt/loom/web"
)

// cpuRounds is how many times the cpu handler hashes its 4 KiB block:
// about a millisecond of one core on a current x86 machine.
const cpuRounds = 256

// cpuBlock is the data the cpu handler hashes.
var cpuBlock = func() []byte {
	b := make([]byte, 4<<10)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}()

// cpuWork is the cpu handler's work: cpuRounds chained SHA-256 sums.
func cpuWork() [sha256.Size]byte {
	sum := sha256.Sum256(cpuBlock)
	for range cpuRounds - 1 {
		h := sha256.New()
		h.Write(sum[:])
		h.Write(cpuBlock)
		h.Sum(sum[:0])
	}
	return sum
}

func serveCPU(_ context.Context, app *web.App, _ Plan, _ string) (func() error, error) {
	app.Get("/hash", func(w http.ResponseWriter, _ *http.Request) error {
		sum := cpuWork()
		_, err := io.WriteString(w, "sha256="+hex.EncodeToString(sum[:])+"\n")
		return err
	})
	return nil, nil
}

// cpuCost measures, once per process, how long cpuWork takes on one core
// of this machine.
// The fastest of several batches is taken: other processes on the machine
// only ever make a batch slower.
var cpuCost = sync.OnceValue(func() time.Duration {
	const batches, n = 7, 8
	cpuWork() // warm the caches
	best := time.Duration(1<<63 - 1)
	for range batches {
		start := time.Now()
		for range n {
			cpuWork()
		}
		best = min(best, time.Since(start)/n)
	}
	return best
})

// cpuLimit: each request needs cpuCost of one core, so the machine's cores
// serve at most cores ÷ cpuCost requests a second — less in practice,
// since the load generator runs on the same cores.
func cpuLimit(Plan) Limit {
	cost := cpuCost()
	cores := runtime.NumCPU()
	perSecond := float64(cores) / cost.Seconds()
	return Limit{
		PerSecond: perSecond,
		Formula: fmt.Sprintf("%d cores ÷ %s of CPU per request (measured here) = %s req/s, shared with the load generator",
			cores, cost.Round(time.Microsecond), count(int64(perSecond))),
	}
}
