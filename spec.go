package loom

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind names an execution model: the first word of a spec, and Stats.Kind.
type Kind string

// The kinds of executor this package builds, one per constructor.
const (
	KindVirtual       Kind = "virtual"         // Virtual
	KindPool          Kind = "pool"            // Pool
	KindThreads       Kind = "threads"         // Threads
	KindThreadPerTask Kind = "thread-per-task" // ThreadPerTask
	KindLimit         Kind = "limit"           // Limit
	KindAdaptive      Kind = "adaptive"        // Adaptive
)

// Spec describes an executor: what a spec string such as
// "pool:64,queue=1000,name=http" says, as fields. ParseSpec returns a
// complete Spec, with the kind's defaults filled in for what the string left
// out; New builds the executor it describes. A Spec is a plain value, safe to
// copy and compare.
type Spec struct {
	// Kind is the execution model. The zero Kind is not valid.
	Kind Kind
	// Workers is the N of pool:N and threads:N (the number of workers) and
	// of limit:N (the most tasks running at once). It must be positive for
	// those kinds, and 0 for virtual and thread-per-task.
	Workers int
	// Queue is how many admitted tasks may wait for a worker or slot; 0
	// means none wait. It applies to pool, threads, limit and adaptive, and
	// must be 0 for the others. QueueFollowsLimit, adaptive's only, bounds
	// the queue by half the current limit. ParseSpec fills in the kind's
	// default (pool and threads: Workers; limit: 0; adaptive:
	// QueueFollowsLimit) when the string gives no queue=.
	Queue int
	// Full is what Go and Run do when there is no room: FullWait or
	// FullReject. It applies to pool and threads (default FullWait), limit
	// and adaptive (default FullReject); ParseSpec fills the default in, and
	// New takes 0 to mean it. It must be 0 for the others.
	Full FullPolicy
	// Name names the executor (see WithName); "" leaves it unnamed,
	// or named by New's options, or by FromEnv after the name it was given.
	Name string
	// MinLimit, MaxLimit and InitialLimit bound an adaptive executor's
	// limit and set where it starts (WithLimitRange, WithInitialLimit); 0 means the
	// default (1, 10,000 and the maximum). Each must be 0 for the other kinds, and
	// InitialLimit, when given, within the range.
	MinLimit, MaxLimit, InitialLimit int
	// MaxQueueWait bounds a limit executor's queue by the wait a newcomer
	// can expect in it (WithMaxQueueWait); 0 means no such bound. It needs
	// a Queue and FullReject, and must be 0 for the other kinds.
	MaxQueueWait time.Duration
}

// QueueFollowsLimit is the Spec.Queue of an adaptive executor whose queue
// holds up to half its current limit (at least 1): its default, which a
// spec string says by giving no queue=. Other kinds refuse it.
const QueueFollowsLimit = -1

// A kindInfo is one entry of the table of kinds: everything Parse, ParseSpec,
// New, newConfig and Stats know about a kind. A new kind is a new entry.
type kindInfo struct {
	kind Kind
	// count is what the N of kind:N is called in errors ("workers",
	// "limit"); "" if the kind takes no count.
	count string
	// most is the largest N a spec may give, and mostWhy why, if it is
	// more than a guard against typos; see the bounds below.
	most    int
	mostWhy string
	// bounded says whether the kind can be full, so that WithQueue and WithFull
	// apply to it.
	bounded bool
	// adapts says whether the kind's limit moves, so that min, max and
	// initial apply to it.
	adapts bool
	// timesQueue says whether the kind's queue can be bounded by the
	// expected wait, so that maxwait applies to it.
	timesQueue bool
	// queue returns the default queue for a count of n; full is the default
	// policy. Both are zero for kinds that are not bounded.
	queue func(n int) int
	full  FullPolicy
	// build makes the executor from a valid, complete spec; opts come
	// first and hold neither Queue nor Full.
	build func(s Spec, opts []Option) (Executor, error)
}

// Bounds on the counts a spec may give. A spec often comes from an
// environment variable, and a typo should be an error, not a pool of a
// million goroutines or a queue that fills memory before the first task.
// docs/executors.md gives the memory each costs.
const (
	maxPoolWorkers = 1 << 14 // started at once, about 3 KB each: 50 MB
	maxLimit       = 1 << 20 // a bound only: a limit starts nothing up front
	maxThreads     = 1 << 20 // New also checks the process's thread limit
	maxQueue       = 1 << 22
)

// kinds is the table of kinds, in the order errors list them. It is filled
// in by init because the constructors it names look kinds up themselves.
var kinds []kindInfo

func init() {
	none := func(int) int { return 0 }
	same := func(n int) int { return n }
	kinds = []kindInfo{
		{kind: KindVirtual, queue: none,
			build: func(_ Spec, opts []Option) (Executor, error) { return Virtual(opts...), nil }},
		{kind: KindPool, count: "workers", most: maxPoolWorkers, bounded: true, queue: same, full: FullWait,
			mostWhy: "a pool starts every worker at once, about 3 KB each; limit:N bounds more tasks without starting them",
			build:   func(s Spec, opts []Option) (Executor, error) { return Pool(s.Workers, opts...), nil }},
		{kind: KindThreads, count: "workers", most: maxThreads, bounded: true, queue: same, full: FullWait,
			build: func(s Spec, opts []Option) (Executor, error) {
				if err := checkThreads(s.Workers); err != nil {
					return nil, err
				}
				return newPool(KindThreads, s.Workers, true, opts), nil // Threads would check again, and panic
			}},
		{kind: KindThreadPerTask, queue: none,
			build: func(_ Spec, opts []Option) (Executor, error) { return ThreadPerTask(opts...), nil }},
		{kind: KindLimit, count: "limit", most: maxLimit, bounded: true, timesQueue: true, queue: none, full: FullReject,
			build: func(s Spec, opts []Option) (Executor, error) { return Limit(s.Workers, opts...), nil }},
		{kind: KindAdaptive, bounded: true, adapts: true, queue: func(int) int { return QueueFollowsLimit }, full: FullReject,
			build: func(s Spec, opts []Option) (Executor, error) {
				// What the spec leaves at 0, WithLimitRange and WithInitialLimit
				// options may set, as WithName fills in an unnamed spec.
				return Adaptive(append(opts, option(func(c *config) {
					if s.MinLimit != 0 || s.MaxLimit != 0 {
						c.limitMin, c.limitMax = s.MinLimit, s.MaxLimit
					}
					if s.InitialLimit != 0 {
						c.limitInitial = s.InitialLimit
					}
				}))...), nil
			}},
	}
}

// lookupKind returns the table entry of k, or nil.
func lookupKind(k Kind) *kindInfo {
	for i := range kinds {
		if kinds[i].kind == k {
			return &kinds[i]
		}
	}
	return nil
}

// kindNames lists the known kinds for an error: "virtual, pool, …".
func kindNames() string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k.kind)
	}
	return strings.Join(names, ", ")
}

// ErrBadSpec is wrapped by every error ParseSpec, Spec.New, Parse and FromEnv
// return for a spec they refuse.
var ErrBadSpec = errors.New("loom: bad executor spec")

// specError is the error for a bad spec: it quotes a bounded excerpt of the
// spec once, says what was wrong, and wraps ErrBadSpec.
type specError struct {
	verb   string // "parse" for ParseSpec, "build" for New
	spec   string
	reason error
}

func (e *specError) Error() string {
	return e.verb + " executor spec " + excerpt(e.spec, specExcerpt) + ": " + e.reason.Error()
}

func (e *specError) Unwrap() []error { return []error{ErrBadSpec, e.reason} }

// An error quotes the spec once, cut to specExcerpt bytes: enough for any
// sensible spec, while a 10 KB one does not flood a log. The part it
// complains about is quoted again only up to partExcerpt bytes.
const (
	specExcerpt = 64
	partExcerpt = 24
)

// excerpt quotes s whole if it is at most max bytes long, else its first
// max bytes (cut on a rune boundary) and its length.
func excerpt(s string, max int) string {
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

// quotePart quotes a part of a spec for an error that has quoted the spec.
func quotePart(s string) string { return excerpt(s, partExcerpt) }

// ParseSpec parses an executor spec:
//
//	kind[:N][,key=value]...
//
// kind is one of virtual, pool:N, threads:N, thread-per-task, limit:N or
// adaptive, where N is the number of workers (pool, threads) or the limit
// (limit). Keys: queue=Q, full=reject|wait and name=S; queue and full apply
// to pool, threads, limit and adaptive only; min=, max= and initial= (the
// range and start of its moving limit, positive, initial within the range)
// to adaptive only; maxwait=D (a positive duration, such as 10ms: see
// WithMaxQueueWait) to limit with a queue and full=reject only. Spaces
// around the parts are ignored. N is at most
// 16,384 for pool (its workers start at once), 1,048,576 for limit and
// threads (New also checks threads against the process's thread limit), and
// Q at most 4,194,304; adaptive without queue= lets half its current limit
// wait (QueueFollowsLimit), and adaptive,queue=0 none. Examples: "virtual", "pool:64,queue=1000",
// "threads:16", "limit:500,queue=100,full=wait,name=db",
// "adaptive,min=4,max=200,queue=50", "limit:10,queue=100,maxwait=10ms".
//
// The Spec returned is complete: what the string leaves out holds the kind's
// default. ParseSpec starts nothing, so it checks configuration before
// anything runs. An error wraps ErrBadSpec, quotes the spec (cut to 64 bytes)
// and names the bad part: parse executor spec "pool:x": workers: ….
func ParseSpec(spec string) (Spec, error) {
	s, err := parseSpec(spec)
	if err != nil {
		return Spec{}, &specError{verb: "parse", spec: spec, reason: err}
	}
	return s, nil
}

func parseSpec(spec string) (Spec, error) {
	var s Spec
	parts := strings.Split(spec, ",")
	head := strings.TrimSpace(parts[0])
	name, count, hasCount := strings.Cut(head, ":")
	s.Kind = Kind(strings.TrimSpace(name))
	k := lookupKind(s.Kind)
	switch {
	case s.Kind == "":
		return s, fmt.Errorf("no executor kind (known: %s)", kindNames())
	case k == nil && len(s.Kind) > partExcerpt:
		// The spec's excerpt already shows its start.
		return s, fmt.Errorf("unknown executor kind of %d bytes (known: %s)", len(s.Kind), kindNames())
	case k == nil:
		return s, fmt.Errorf("unknown executor kind %q (known: %s)", s.Kind, kindNames())
	case k.count == "" && hasCount && strings.Contains(count, "="):
		// "adaptive:min=5": options after a colon, not a comma.
		return s, fmt.Errorf("%s takes no count, got :%s; options follow a comma, as in %q", s.Kind, quotePart(strings.TrimSpace(count)), string(s.Kind)+",queue=100")
	case k.count == "" && hasCount:
		return s, fmt.Errorf("%s takes no count, got :%s", s.Kind, quotePart(strings.TrimSpace(count)))
	case k.count != "" && !hasCount:
		return s, fmt.Errorf("%s needs a %s count, as in %q", s.Kind, k.count, string(s.Kind)+":16")
	case k.count != "":
		n, err := atoi(count)
		if err != nil {
			return s, fmt.Errorf("%s: %w", k.count, err)
		}
		s.Workers = n
	}
	s.Queue, s.Full = k.queue(s.Workers), k.full

	seen := make(map[string]bool)
	for _, part := range parts[1:] {
		part = strings.TrimSpace(part)
		key, value, ok := strings.Cut(part, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok {
			return s, fmt.Errorf("option %s is not key=value", quotePart(part))
		}
		if seen[key] {
			return s, fmt.Errorf("key %s given twice", quotePart(key))
		}
		seen[key] = true
		switch key {
		case "queue":
			q, err := atoi(value)
			if err != nil {
				return s, fmt.Errorf("queue: %w", err)
			}
			if q < 0 {
				return s, fmt.Errorf("queue: %d is negative", q)
			}
			s.Queue = q
		case "full":
			switch value {
			case "reject":
				s.Full = FullReject
			case "wait":
				s.Full = FullWait
			default:
				return s, fmt.Errorf("full: %s is neither reject nor wait", quotePart(value))
			}
		case "name":
			if value == "" {
				return s, errors.New("name: empty")
			}
			s.Name = value
		case "maxwait":
			if !k.timesQueue {
				return s, fmt.Errorf("maxwait does not apply to %s executors: only limit bounds its queue by time", s.Kind)
			}
			d, err := time.ParseDuration(value)
			if err != nil {
				return s, fmt.Errorf("maxwait: %s is not a duration such as 10ms", quotePart(value))
			}
			if d <= 0 {
				return s, fmt.Errorf("maxwait: %v is not positive", d)
			}
			s.MaxQueueWait = d
		case "min", "max", "initial":
			if !k.adapts {
				return s, fmt.Errorf("%s does not apply to %s executors: their limit does not move", key, s.Kind)
			}
			n, err := atoi(value)
			if err != nil {
				return s, fmt.Errorf("%s: %w", key, err)
			}
			if n <= 0 {
				return s, fmt.Errorf("%s: %d is not positive", key, n)
			}
			switch key {
			case "min":
				s.MinLimit = n
			case "max":
				s.MaxLimit = n
			default:
				s.InitialLimit = n
			}
		default:
			known := "queue, full, name"
			if k.adapts {
				known += ", min, max, initial"
			}
			if k.timesQueue {
				known += ", maxwait"
			}
			return s, fmt.Errorf("unknown key %s (known: %s)", quotePart(key), known)
		}
		if (key == "queue" || key == "full") && !k.bounded {
			return s, fmt.Errorf("%s does not apply to %s executors: they never queue or fill up", key, s.Kind)
		}
	}
	return s, s.check(k)
}

// atoi is strconv.Atoi with an error that quotes a bounded excerpt.
func atoi(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) {
			return 0, fmt.Errorf("%s is not a number: %w", quotePart(s), ne.Err)
		}
		return 0, err
	}
	return n, nil
}

// check reports what is wrong with a spec of kind k, or nil.
func (s Spec) check(k *kindInfo) error {
	switch {
	case k.count != "" && s.Workers <= 0:
		return fmt.Errorf("%s: %d is not positive", k.count, s.Workers)
	case k.count != "" && s.Workers > k.most && k.mostWhy != "":
		return fmt.Errorf("%s: %d is more than the most allowed, %d: %s", k.count, s.Workers, k.most, k.mostWhy)
	case k.count != "" && s.Workers > k.most:
		return fmt.Errorf("%s: %d is more than the most allowed, %d", k.count, s.Workers, k.most)
	case k.count == "" && s.Workers != 0:
		return fmt.Errorf("%s takes no count, got Workers %d", s.Kind, s.Workers)
	case s.Queue == QueueFollowsLimit && k.bounded && !k.adapts:
		return fmt.Errorf("queue: %d (QueueFollowsLimit) applies to adaptive executors only", s.Queue)
	case s.Queue < 0 && s.Queue != QueueFollowsLimit:
		return fmt.Errorf("queue: %d is negative", s.Queue)
	case s.Queue > maxQueue:
		return fmt.Errorf("queue: %d is more than the most allowed, %d", s.Queue, maxQueue)
	case s.Full != 0 && s.Full != FullReject && s.Full != FullWait:
		return fmt.Errorf("full: %v is neither reject nor wait", s.Full)
	case !k.bounded && (s.Queue != 0 || s.Full != 0):
		return fmt.Errorf("the queue and full settings do not apply to %s executors: they never queue or fill up", s.Kind)
	case !k.adapts && (s.MinLimit != 0 || s.MaxLimit != 0 || s.InitialLimit != 0):
		return fmt.Errorf("min, max and initial do not apply to %s executors: their limit does not move", s.Kind)
	case s.MaxQueueWait < 0:
		return fmt.Errorf("maxwait: %v is not positive", s.MaxQueueWait)
	case s.MaxQueueWait != 0 && !k.timesQueue:
		return fmt.Errorf("maxwait does not apply to %s executors: only limit bounds its queue by time", s.Kind)
	case s.MaxQueueWait != 0 && s.Queue == 0:
		return fmt.Errorf("maxwait: %v bounds the wait in a queue, and there is none: give queue= too", s.MaxQueueWait)
	case s.MaxQueueWait != 0 && s.Full == FullWait:
		return fmt.Errorf("maxwait: %v refuses a task that would wait too long, and full=wait waits: give full=reject", s.MaxQueueWait)
	}
	return s.checkLimits()
}

// checkLimits reports what is wrong with an adaptive spec's min, max and
// initial, or nil.
func (s Spec) checkLimits() error {
	least, most := max(s.MinLimit, adaptiveMin), s.MaxLimit
	if most == 0 {
		most = max(adaptiveMax, least)
	}
	switch {
	case s.MinLimit < 0:
		return fmt.Errorf("min: %d is not positive", s.MinLimit)
	case s.MaxLimit < 0:
		return fmt.Errorf("max: %d is not positive", s.MaxLimit)
	case s.InitialLimit < 0:
		return fmt.Errorf("initial: %d is not positive", s.InitialLimit)
	case s.MaxLimit > maxLimit:
		return fmt.Errorf("max: %d is more than the most allowed, %d", s.MaxLimit, maxLimit)
	case s.MinLimit > maxLimit:
		return fmt.Errorf("min: %d is more than the most allowed, %d", s.MinLimit, maxLimit)
	case most < least:
		return fmt.Errorf("max: %d is less than min, %d", most, least)
	case s.InitialLimit != 0 && (s.InitialLimit < least || s.InitialLimit > most):
		return fmt.Errorf("initial: %d is outside min..max, %d..%d", s.InitialLimit, least, most)
	}
	return nil
}

// String returns the spec in its canonical form, which ParseSpec reads back
// to the same Spec: the kind, its count, then queue=, full= and name= where
// they differ from the kind's defaults ("pool:64,queue=1000,name=http"). A
// Name holding a comma, or spaces at its ends, does not survive the trip.
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(string(s.Kind))
	k := lookupKind(s.Kind)
	if k == nil || k.count != "" || s.Workers != 0 {
		b.WriteString(":" + strconv.Itoa(s.Workers))
	}
	if k == nil || s.Queue != k.queue(s.Workers) {
		b.WriteString(",queue=" + strconv.Itoa(s.Queue))
	}
	if s.Full != 0 && (k == nil || s.Full != k.full) {
		b.WriteString(",full=" + s.Full.String())
	}
	for _, kv := range []struct {
		key string
		n   int
	}{{"min", s.MinLimit}, {"max", s.MaxLimit}, {"initial", s.InitialLimit}} {
		if kv.n != 0 {
			b.WriteString("," + kv.key + "=" + strconv.Itoa(kv.n))
		}
	}
	if s.MaxQueueWait != 0 {
		b.WriteString(",maxwait=" + s.MaxQueueWait.String())
	}
	if s.Name != "" {
		b.WriteString(",name=" + s.Name)
	}
	return b.String()
}

// New builds the executor s describes; opts apply first, for what a spec
// cannot say (WithPanicHandler, WithPanicLogger) and for a name the spec leaves
// empty. WithQueue and WithFull options are an error: set s.Queue and s.Full. New
// returns an error, wrapping ErrBadSpec, for a Spec ParseSpec would refuse,
// and for threads:N when N OS threads and the runtime's own would exceed the
// process's thread limit (debug.SetMaxThreads); it panics on nothing. A
// threads executor starts its threads, and a pool its workers, before New
// returns.
func (s Spec) New(opts ...Option) (Executor, error) {
	k := lookupKind(s.Kind)
	if k == nil {
		return nil, &specError{verb: "build", spec: s.String(),
			reason: fmt.Errorf("unknown executor kind %s (known: %s)", quotePart(string(s.Kind)), kindNames())}
	}
	if s.Full == 0 {
		s.Full = k.full
	}
	if err := s.check(k); err != nil {
		return nil, &specError{verb: "build", spec: s.String(), reason: err}
	}
	var given config
	for _, o := range opts {
		if o.apply != nil {
			o.apply(&given)
		}
	}
	if given.queueSet || given.full != 0 {
		return nil, &specError{verb: "build", spec: s.String(),
			reason: errors.New("the WithQueue and WithFull options do not combine with a spec: set its queue and full instead")}
	}
	if given.maxQueueWait != 0 {
		return nil, &specError{verb: "build", spec: s.String(),
			reason: errors.New("the WithMaxQueueWait option does not combine with a spec: set its maxwait instead")}
	}
	all := opts[:len(opts):len(opts)]
	if s.Name != "" {
		all = append(all, WithName(s.Name))
	}
	if k.bounded && s.Queue != QueueFollowsLimit { // adaptive's default: no Queue option
		all = append(all, WithQueue(s.Queue))
	}
	if k.bounded {
		all = append(all, WithFull(s.Full))
	}
	if s.MaxQueueWait != 0 {
		all = append(all, WithMaxQueueWait(s.MaxQueueWait))
	}
	e, err := k.build(s, all)
	if err != nil {
		return nil, &specError{verb: "build", spec: s.String(), reason: err}
	}
	return e, nil
}
