package loom

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// kinds lists the executor kinds Parse knows, in the order errors name them.
var kinds = []string{"virtual", "pool", "threads", "thread-per-task", "limit"}

// Parse builds an executor from a spec:
//
//	kind[:N][,key=value]...
//
// kind is one of virtual, pool:N, threads:N, thread-per-task or limit:N,
// where N is the number of workers (pool, threads) or the limit (limit).
// Keys: queue=Q (Queue), full=reject|wait (Full) and name=S (Name); queue
// and full apply to pool, threads and limit only. N is at most 1,048,576
// (10,000 for threads, the runtime's default thread limit) and Q at most
// 4,194,304: a spec often comes from the environment, and a typo should be an
// error rather than a billion goroutines. Spaces around the parts
// are ignored. Examples: "virtual", "pool:64", "pool:64,queue=1000",
// "threads:16", "thread-per-task", "limit:500,queue=100,full=wait".
//
// opts apply before the spec's keys, which override them; use them for what a
// spec cannot say, such as Logger and PanicHandler. An error names the bad
// part: parse executor spec "pool:x": workers: strconv.Atoi: ….
func Parse(spec string, opts ...Option) (Executor, error) {
	sp, err := checkSpec(spec, opts)
	if err != nil {
		return nil, err
	}
	return sp.build(), nil
}

// ValidateSpec returns the error Parse would return for spec, or nil, without
// building an executor: Parse of "threads:16" starts sixteen OS threads. Use
// it to check configuration before anything starts.
func ValidateSpec(spec string) error {
	_, err := checkSpec(spec, nil)
	return err
}

func checkSpec(spec string, opts []Option) (parsedSpec, error) {
	sp, err := parseSpec(spec, opts)
	if err != nil {
		return sp, fmt.Errorf("parse executor spec %q: %w", spec, err)
	}
	return sp, nil
}

// Bounds on the counts a spec may give. A spec often comes from an
// environment variable, and a typo should be an error, not a pool of a
// billion goroutines or a queue that fills memory before the first task.
const (
	maxWorkers = 1 << 20 // pool, limit
	maxThreads = 10000   // the runtime's default limit on OS threads (debug.SetMaxThreads)
	maxQueue   = 1 << 22
)

// parsedSpec is a spec that parsed: everything needed to build the executor.
type parsedSpec struct {
	kind string
	n    int
	cfg  config
}

func (sp parsedSpec) build() Executor {
	// The constructors apply their defaults to what is still unset.
	opt := func(c *config) { *c = sp.cfg }
	switch sp.kind {
	case "virtual":
		return Virtual(opt)
	case "thread-per-task":
		return ThreadPerTask(opt)
	case "pool":
		return Pool(sp.n, opt)
	case "threads":
		return Threads(sp.n, opt)
	default:
		return Limit(sp.n, opt)
	}
}

func parseSpec(spec string, opts []Option) (parsedSpec, error) {
	var sp parsedSpec
	parts := strings.Split(spec, ",")
	head := strings.TrimSpace(parts[0])
	kind, count, hasCount := strings.Cut(head, ":")
	kind = strings.TrimSpace(kind)
	sp.kind = kind

	var bounded bool
	countName, most := "", 0
	switch kind {
	case "virtual", "thread-per-task":
	case "pool":
		bounded, countName, most = true, "workers", maxWorkers
	case "threads":
		bounded, countName, most = true, "workers", maxThreads
	case "limit":
		bounded, countName, most = true, "limit", maxWorkers
	case "":
		return sp, fmt.Errorf("no executor kind (known: %s)", strings.Join(kinds, ", "))
	default:
		return sp, fmt.Errorf("unknown executor kind %q (known: %s)", kind, strings.Join(kinds, ", "))
	}

	switch {
	case !bounded && hasCount:
		return sp, fmt.Errorf("%s takes no count, got %q", kind, head)
	case bounded && !hasCount:
		return sp, fmt.Errorf("%s needs a %s count, as in %q", kind, countName, kind+":16")
	case bounded:
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if err != nil {
			return sp, fmt.Errorf("%s: %w", countName, err)
		}
		if n <= 0 {
			return sp, fmt.Errorf("%s: %d is not positive", countName, n)
		}
		if n > most {
			return sp, fmt.Errorf("%s: %d is more than the most allowed, %d", countName, n, most)
		}
		sp.n = n
	}

	for _, o := range opts {
		o(&sp.cfg)
	}
	seen := make(map[string]bool)
	for _, part := range parts[1:] {
		part = strings.TrimSpace(part)
		key, value, ok := strings.Cut(part, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok {
			return sp, fmt.Errorf("option %q is not key=value", part)
		}
		if seen[key] {
			return sp, fmt.Errorf("key %q given twice", key)
		}
		seen[key] = true
		switch key {
		case "queue", "full":
			if !bounded {
				return sp, fmt.Errorf("%s does not apply to %s executors: they never queue or fill up", key, kind)
			}
		}
		switch key {
		case "queue":
			q, err := strconv.Atoi(value)
			if err != nil {
				return sp, fmt.Errorf("queue: %w", err)
			}
			if q < 0 {
				return sp, fmt.Errorf("queue: %d is negative", q)
			}
			if q > maxQueue {
				return sp, fmt.Errorf("queue: %d is more than the most allowed, %d", q, maxQueue)
			}
			sp.cfg.queue, sp.cfg.queueSet = q, true
		case "full":
			switch value {
			case "reject":
				sp.cfg.full = Reject
			case "wait":
				sp.cfg.full = Wait
			default:
				return sp, fmt.Errorf("full: %q is neither reject nor wait", value)
			}
		case "name":
			if value == "" {
				return sp, errors.New("name: empty")
			}
			sp.cfg.name = value
		default:
			return sp, fmt.Errorf("unknown key %q (known: queue, full, name)", key)
		}
	}
	if !bounded && (sp.cfg.queueSet || sp.cfg.full != 0) {
		return sp, fmt.Errorf("the Queue and Full options do not apply to %s executors: they never queue or fill up", kind)
	}
	return sp, nil
}
