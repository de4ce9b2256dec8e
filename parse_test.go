package loom

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/internal/vegas"
)

func TestParse(t *testing.T) {
	tests := []struct {
		spec    string
		kind    Kind
		name    string
		workers int
		queue   int
	}{
		{"virtual", KindVirtual, "", 0, 0},
		{"pool:64", KindPool, "", 64, 64},
		{"pool:64,queue=1000", KindPool, "", 64, 1000},
		{"pool:2,queue=0,full=reject", KindPool, "", 2, 0},
		{"threads:3", KindThreads, "", 3, 3},
		{"thread-per-task", KindThreadPerTask, "", 0, 0},
		{"limit:500", KindLimit, "", 500, 0},
		{"limit:500,queue=100", KindLimit, "", 500, 100},
		{"limit:5,queue=1,full=wait,name=db", KindLimit, "db", 5, 1},
		{" pool : 8 , name = http ", KindPool, "http", 8, 8},
		{"virtual,name=jobs", KindVirtual, "jobs", 0, 0},
		{"adaptive,queue=50", KindAdaptive, "", 10000, 50},
		{"limit:10,queue=100,maxwait=5ms", KindLimit, "", 10, 100},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			sp, err := ParseSpec(tt.spec)
			if err != nil {
				t.Errorf("ParseSpec(%q) = %v; want nil", tt.spec, err)
			}
			specWorkers := tt.workers // Stats.Workers; a Spec's is 0 for a kind without a count
			if lookupKind(tt.kind).count == "" {
				specWorkers = 0
			}
			if sp.Kind != tt.kind || sp.Name != tt.name || sp.Workers != specWorkers || sp.Queue != tt.queue {
				t.Errorf("ParseSpec(%q) = %+v; want kind %q, name %q, workers %d, queue %d",
					tt.spec, sp, tt.kind, tt.name, specWorkers, tt.queue)
			}
			e, err := Parse(tt.spec)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.spec, err)
			}
			defer shutdown(t, e)
			s := e.Stats()
			if s.Kind != tt.kind || s.Name != tt.name || s.Workers != tt.workers || s.QueueCapacity != tt.queue {
				t.Errorf("Parse(%q) kind, name, workers, queue = %q, %q, %d, %d; want %q, %q, %d, %d",
					tt.spec, s.Kind, s.Name, s.Workers, s.QueueCapacity, tt.kind, tt.name, tt.workers, tt.queue)
			}
		})
	}
}

// ParseSpec fills in each kind's defaults, so that a Spec says everything.
func TestParseSpecDefaults(t *testing.T) {
	tests := []struct {
		spec string
		want Spec
	}{
		{"virtual", Spec{Kind: KindVirtual}},
		{"thread-per-task,name=x", Spec{Kind: KindThreadPerTask, Name: "x"}},
		{"pool:16", Spec{Kind: KindPool, Workers: 16, Queue: 16, Full: FullWait}},
		{"threads:4,full=reject", Spec{Kind: KindThreads, Workers: 4, Queue: 4, Full: FullReject}},
		{"limit:100", Spec{Kind: KindLimit, Workers: 100, Queue: 0, Full: FullReject}},
		{"limit:100,queue=900,full=wait", Spec{Kind: KindLimit, Workers: 100, Queue: 900, Full: FullWait}},
		{"adaptive", Spec{Kind: KindAdaptive, Queue: QueueFollowsLimit, Full: FullReject}},
		{"adaptive,queue=0", Spec{Kind: KindAdaptive, Queue: 0, Full: FullReject}}, // no queue, said outright
		{"adaptive,min=4,max=200,initial=10,queue=50,full=wait", Spec{Kind: KindAdaptive, Queue: 50, Full: FullWait,
			MinLimit: 4, MaxLimit: 200, InitialLimit: 10}},
		{"adaptive,min=1,max=1", Spec{Kind: KindAdaptive, Queue: QueueFollowsLimit, Full: FullReject, MinLimit: 1, MaxLimit: 1}},         // at the edge: min = max
		{"adaptive,min=7,initial=7", Spec{Kind: KindAdaptive, Queue: QueueFollowsLimit, Full: FullReject, MinLimit: 7, InitialLimit: 7}}, // initial exactly at min
		{"adaptive,max=1048576", Spec{Kind: KindAdaptive, Queue: QueueFollowsLimit, Full: FullReject, MaxLimit: 1 << 20}},                // exactly the most allowed
		{"adaptive,min=10001", Spec{Kind: KindAdaptive, Queue: QueueFollowsLimit, Full: FullReject, MinLimit: 10001}},                    // the default max follows min
		{"limit:10,maxwait=1ns,queue=1", Spec{Kind: KindLimit, Workers: 10, Queue: 1, Full: FullReject, MaxQueueWait: time.Nanosecond}},  // the least wait, before its queue
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.spec)
		if err != nil || got != tt.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v, nil", tt.spec, got, err, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		spec string
		want string // a part of the error message
	}{
		{"", "no executor kind"},
		{"elastic", `unknown executor kind "elastic" (known: virtual, pool, threads, thread-per-task, limit, adaptive)`},
		{"adaptive:4", "adaptive takes no count"},
		{"adaptive:min=5", `adaptive takes no count, got :"min=5"; options follow a comma, as in "adaptive,queue=100"`},
		{"pool", `pool needs a workers count`},
		{"pool:x", `parse executor spec "pool:x": workers: "x" is not a number: invalid syntax`},
		{"pool:0", "workers: 0 is not positive"},
		{"limit:-3", "limit: -3 is not positive"},
		{"virtual:4", "virtual takes no count"},
		{"pool:4,queue=-1", "queue: -1 is negative"},
		{"adaptive,queue=-1", "queue: -1 is negative"}, // QueueFollowsLimit is said by giving no queue=
		{"pool:4,queue=many", `queue: "many" is not a number`},
		{"pool:4,queue=1,queue=2", `key "queue" given twice`},
		{"pool:4,colour=blue", `unknown key "colour" (known: queue, full, name)`},
		{"pool:4,fast", `option "fast" is not key=value`},
		{"pool:4,full=maybe", `full: "maybe" is neither reject nor wait`},
		{"virtual,queue=10", "queue does not apply to virtual executors"},
		{"thread-per-task,full=wait", "full does not apply to thread-per-task executors"},
		{"pool:4,name=", "name: empty"},
		{"pool:2000000", "workers: 2000000 is more than the most allowed, 16384"},
		{"threads:2000000", "workers: 2000000 is more than the most allowed, 1048576"},
		{"limit:9223372036854775807,queue=1", "limit: 9223372036854775807 is more than the most allowed"},
		{"limit:1,queue=99999999", "queue: 99999999 is more than the most allowed"},
		{"adaptive,min=0", "min: 0 is not positive"},
		{"adaptive,max=-2", "max: -2 is not positive"},
		{"adaptive,initial=0", "initial: 0 is not positive"},
		{"adaptive,min=10,max=5", "max: 5 is less than min, 10"},
		{"adaptive,max=1048577", "max: 1048577 is more than the most allowed, 1048576"},
		{"adaptive,min=5,max=9,initial=10", "initial: 10 is outside min..max, 5..9"},
		{"adaptive,min=5,initial=4", "initial: 4 is outside min..max, 5..10000"},
		{"adaptive,min=x", `min: "x" is not a number`},
		{"adaptive,step=2", `unknown key "step" (known: queue, full, name, min, max, initial)`},
		{"limit:4,min=2", "min does not apply to limit executors"},
		{"pool:4,initial=2", "initial does not apply to pool executors"},
		{"limit:4,queue=8,maxwait=soon", `maxwait: "soon" is not a duration such as 10ms`},
		{"limit:4,queue=8,maxwait=0s", "maxwait: 0s is not positive"},
		{"limit:4,queue=8,maxwait=-1ms", "maxwait: -1ms is not positive"},
		{"limit:4,maxwait=10ms", "give queue= too"},
		{"limit:4,queue=8,full=wait,maxwait=10ms", "give full=reject"},
		{"pool:4,maxwait=10ms", "maxwait does not apply to pool executors"},
		{"adaptive,maxwait=10ms", "maxwait does not apply to adaptive executors"},
		{"limit:4,colour=blue", `unknown key "colour" (known: queue, full, name, maxwait)`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, serr := ParseSpec(tt.spec)
			if serr == nil || !strings.Contains(serr.Error(), tt.want) {
				t.Errorf("ParseSpec(%q) = %v; want an error containing %q", tt.spec, serr, tt.want)
			}
			if !errors.Is(serr, ErrBadSpec) {
				t.Errorf("ParseSpec(%q) error %v does not wrap ErrBadSpec", tt.spec, serr)
			}
			e, err := Parse(tt.spec)
			if err == nil {
				shutdown(t, e)
				t.Fatalf("Parse(%q) = nil error; want one containing %q", tt.spec, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) error = %q; want it to contain %q", tt.spec, err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), `parse executor spec "`) {
				t.Errorf("Parse(%q) error = %q; want the prefix %q", tt.spec, err, `parse executor spec "`)
			}
		})
	}
}

// One table of kinds drives ParseSpec, Parse, Spec.New and Stats.Kind: a
// kind added to it is parsed, built and reported with nothing else to change.
func TestKindTableDrivesParseAndStats(t *testing.T) {
	var names []string
	for _, k := range kinds {
		names = append(names, string(k.kind))
		spec := string(k.kind)
		if k.count != "" {
			spec += ":2"
		}
		sp, err := ParseSpec(spec)
		if err != nil {
			t.Errorf("ParseSpec(%q) = %v; want nil for a kind in the table", spec, err)
			continue
		}
		if sp.Kind != k.kind || sp.Queue != k.queue(sp.Workers) || sp.Full != k.full {
			t.Errorf("ParseSpec(%q) = %+v; want kind %q with the table's queue %d and full %v",
				spec, sp, k.kind, k.queue(sp.Workers), k.full)
		}
		e, err := Parse(spec + ",name=t")
		if err != nil {
			t.Errorf("Parse(%q) = %v; want nil", spec, err)
			continue
		}
		if got := e.Stats().Kind; got != k.kind {
			t.Errorf("Parse(%q).Stats().Kind = %q; want %q", spec, got, k.kind)
		}
		shutdown(t, e)
		if k.count != "" {
			if _, err := ParseSpec(fmt.Sprintf("%s:%d", k.kind, k.most)); err != nil {
				t.Errorf("%s:%d (the most) refused: %v", k.kind, k.most, err)
			}
			if _, err := ParseSpec(fmt.Sprintf("%s:%d", k.kind, k.most+1)); err == nil {
				t.Errorf("%s:%d (one past the most) accepted", k.kind, k.most+1)
			}
		}
		_, err = ParseSpec(spec + ",queue=1")
		if k.bounded != (err == nil) {
			t.Errorf("ParseSpec(%q) = %v; the table says bounded is %v", spec+",queue=1", err, k.bounded)
		}
	}
	_, err := ParseSpec("no-such-kind")
	want := fmt.Sprintf("(known: %s)", strings.Join(names, ", "))
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("unknown kind: got %v; want an error ending %q", err, want)
	}
}

// A pool starts its workers at once (pool:1048576 took 3.2 GB before its
// first task), so its count is bounded well below the limit's: pool:16384
// parses, pool:16385 does not, and says why.
func TestPoolWorkersBound(t *testing.T) {
	if _, err := ParseSpec("pool:16384"); err != nil {
		t.Errorf("pool:16384: %v; want nil", err)
	}
	_, err := ParseSpec("pool:16385")
	if want := "workers: 16385 is more than the most allowed, 16384: a pool starts every worker at once, about 3 KB each"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("pool:16385: got %v; want an error containing %q", err, want)
	}
	if _, err := (Spec{Kind: KindPool, Workers: 16385}).New(); err == nil || !errors.Is(err, ErrBadSpec) {
		t.Errorf("Spec{pool, 16385}.New() = %v; want ErrBadSpec", err)
	}
	if _, err := ParseSpec("limit:16385"); err != nil {
		t.Errorf("limit:16385: %v; want nil (a limit starts nothing up front)", err)
	}
}

func TestSpecString(t *testing.T) {
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: KindVirtual}, "virtual"},
		{Spec{Kind: KindPool, Workers: 64, Queue: 64, Full: FullWait}, "pool:64"},
		{Spec{Kind: KindPool, Workers: 64, Queue: 1000, Full: FullReject, Name: "http"}, "pool:64,queue=1000,full=reject,name=http"},
		{Spec{Kind: KindPool, Workers: 4}, "pool:4,queue=0"},
		{Spec{Kind: KindLimit, Workers: 5, Full: FullReject}, "limit:5"},
		{Spec{Kind: KindThreadPerTask, Name: "x"}, "thread-per-task,name=x"},
		{Spec{Kind: KindAdaptive, Queue: QueueFollowsLimit, Full: FullReject}, "adaptive"},
		{Spec{Kind: KindAdaptive, Full: FullReject}, "adaptive,queue=0"},
		{Spec{Kind: KindAdaptive, Queue: 8, Full: FullReject, MaxLimit: 50}, "adaptive,queue=8,max=50"},
		{Spec{Kind: KindLimit, Workers: 10, Queue: 100, Full: FullReject, MaxQueueWait: 1500 * time.Microsecond}, "limit:10,queue=100,maxwait=1.5ms"},
	}
	for _, tt := range tests {
		if got := tt.spec.String(); got != tt.want {
			t.Errorf("%+v.String() = %q; want %q", tt.spec, got, tt.want)
		}
	}
}

// A Spec built by hand is checked by New as ParseSpec checks a string.
func TestSpecNewErrors(t *testing.T) {
	tests := []struct {
		spec Spec
		opts []Option
		want string
	}{
		{Spec{}, nil, `unknown executor kind ""`},
		{Spec{Kind: "elastic"}, nil, `unknown executor kind "elastic"`},
		{Spec{Kind: KindPool}, nil, "workers: 0 is not positive"},
		{Spec{Kind: KindVirtual, Workers: 3}, nil, "virtual takes no count"},
		{Spec{Kind: KindVirtual, Queue: 3}, nil, "do not apply to virtual executors"},
		{Spec{Kind: KindLimit, Workers: 1, Full: 7}, nil, "full: FullPolicy(7) is neither reject nor wait"},
		{Spec{Kind: KindLimit, Workers: 1, Queue: -2}, nil, "queue: -2 is negative"},
		{Spec{Kind: KindLimit, Workers: 1, Queue: QueueFollowsLimit}, nil, "queue: -1 (QueueFollowsLimit) applies to adaptive executors only"},
		{Spec{Kind: KindPool, Workers: 1, Queue: QueueFollowsLimit}, nil, "applies to adaptive executors only"},
		{Spec{Kind: KindAdaptive, Queue: -2}, nil, "queue: -2 is negative"},
		{Spec{Kind: KindPool, Workers: 2}, []Option{WithQueue(5)}, "WithQueue and WithFull options do not combine with a spec"},
		{Spec{Kind: KindLimit, Workers: 2, Queue: 2}, []Option{WithMaxQueueWait(time.Second)}, "WithMaxQueueWait option does not combine with a spec"},
		{Spec{Kind: KindLimit, Workers: 2, MaxQueueWait: time.Second}, nil, "give queue= too"},
		{Spec{Kind: KindPool, Workers: 2, MaxQueueWait: time.Second}, nil, "maxwait does not apply to pool executors"},
		{Spec{Kind: KindLimit, Workers: 2, Queue: 2, MaxQueueWait: -time.Second}, nil, "maxwait: -1s is not positive"},
	}
	for _, tt := range tests {
		e, err := tt.spec.New(tt.opts...)
		if err == nil {
			shutdown(t, e)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrBadSpec) {
			t.Errorf("%+v.New() = %v; want ErrBadSpec containing %q", tt.spec, err, tt.want)
		}
	}
}

// A 10 KB spec is quoted once, cut short, whichever part of it is bad.
func TestLongSpecQuotedOnce(t *testing.T) {
	long := strings.Repeat("x", 10<<10)
	for _, spec := range []string{
		long,
		"virtual:" + long,
		"pool:" + long,
		"pool:4," + long,
		"pool:4," + long + "=1",
		"pool:4,queue=" + long,
		"pool:4,full=" + long,
		"limit:1,name=a,name=" + long,
	} {
		_, err := ParseSpec(spec)
		if err == nil {
			t.Errorf("ParseSpec of %d bytes = nil; want an error", len(spec))
			continue
		}
		msg := err.Error()
		if len(msg) > 300 {
			t.Errorf("error for a %d-byte spec is %d bytes; want at most 300: %.400s", len(spec), len(msg), msg)
		}
		if n := strings.Count(msg, fmt.Sprintf("(%d bytes)", len(spec))); n != 1 {
			t.Errorf("error quotes the spec %d times; want once: %s", n, msg)
		}
	}
}

func TestParseWithOptions(t *testing.T) {
	e, err := Parse("pool:2,name=spec", WithName("option"))
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, e)
	if s := e.Stats(); s.Name != "spec" {
		t.Errorf("name = %q; want the spec's name %q", s.Name, "spec")
	}
	e2, err := Parse("pool:2", WithName("option"))
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, e2)
	if s := e2.Stats(); s.Name != "option" || s.QueueCapacity != 2 {
		t.Errorf("name, queue = %q, %d; want the option's name %q and the spec's default queue 2", s.Name, s.QueueCapacity, "option")
	}
	// An adaptive spec that leaves its range and start out takes them from
	// the options; one that gives them wins.
	for _, tt := range []struct {
		spec           string
		workers, limit int
	}{{"adaptive", 50, 7}, {"adaptive,max=40,initial=9", 40, 9}} {
		e3, err := Parse(tt.spec, WithLimitRange(5, 50), WithInitialLimit(7))
		if err != nil {
			t.Fatal(err)
		}
		if s := e3.Stats(); s.Workers != tt.workers || s.Limit != tt.limit {
			t.Errorf("Parse(%q, WithLimitRange(5, 50), WithInitialLimit(7)): workers, limit = %d, %d; want %d, %d",
				tt.spec, s.Workers, s.Limit, tt.workers, tt.limit)
		}
		shutdown(t, e3)
	}
	// A spec says its queue and policy; an option saying them too would be
	// silently overruled, so it is an error.
	if _, err := Parse("pool:2", WithQueue(5)); err == nil || !strings.Contains(err.Error(), "set its queue and full instead") {
		t.Errorf("Parse(pool:2, WithQueue(5)) error = %v; want one saying to set the queue in the spec", err)
	}
	if _, err := Parse("virtual", WithQueue(5)); err == nil || !strings.Contains(err.Error(), "do not combine with a spec") {
		t.Errorf("Parse(virtual, WithQueue(5)) error = %v; want one saying WithQueue does not apply", err)
	}
}

func TestFullPolicyString(t *testing.T) {
	tests := []struct {
		p    FullPolicy
		want string
	}{
		{FullReject, "reject"},
		{FullWait, "wait"},
		{0, "FullPolicy(0)"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("FullPolicy(%d).String() = %q; want %q", int(tt.p), got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"virtual", "pool:64", "pool:64,queue=1000", "threads:2", "thread-per-task",
		"limit:500,queue=100", "limit:1,full=wait,name=x", "pool:x", "", ",", "pool:1,queue=1,queue=1",
		"limit:9223372036854775807,queue=1", "pool:2,queue=2,full=wait", "virtual,name= a b ",
		"adaptive,min=2,max=9,initial=3", "adaptive,min=0", "adaptive,max=3,min=4", "limit:3,queue=9,maxwait=2ms",
		"limit:3,queue=9,maxwait=1h2m3.5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		kind, _, _ := strings.Cut(strings.TrimSpace(strings.Split(spec, ",")[0]), ":")
		kind = strings.TrimSpace(kind)
		sp, err := ParseSpec(spec)
		if err != nil {
			_, perr := Parse(spec)
			if perr == nil || perr.Error() != err.Error() {
				t.Fatalf("Parse(%q) error = %v; want ParseSpec's %v", spec, perr, err)
			}
			if !strings.HasPrefix(err.Error(), "parse executor spec ") || !errors.Is(err, ErrBadSpec) {
				t.Fatalf("ParseSpec(%q) error = %v; want ErrBadSpec starting %q", spec, err, "parse executor spec ")
			}
			// The excerpts are bounded in bytes of the spec, and a byte
			// quotes to at most four characters (\xff); 200 for the rest.
			if most := 4*(specExcerpt+partExcerpt) + 200; len(err.Error()) > most {
				t.Fatalf("ParseSpec(%q) error is %d bytes; want at most %d", spec, len(err.Error()), most)
			}
			return
		}
		if string(sp.Kind) != kind {
			t.Fatalf("ParseSpec(%q).Kind = %q; want %q", spec, sp.Kind, kind)
		}
		again, err := ParseSpec(sp.String())
		if err != nil || again != sp {
			t.Fatalf("ParseSpec(%q) = %+v; its String %q parses to %+v, %v", spec, sp, sp.String(), again, err)
		}
		if sp.Workers > 64 || sp.Queue > 1024 {
			return // valid, but too big to build on every fuzz input
		}
		e, err := sp.New()
		if err != nil {
			t.Fatalf("ParseSpec(%q).New() = %v", spec, err)
		}
		defer func() {
			if err := e.Shutdown(context.Background()); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		}()
		s := e.Stats()
		queue := sp.Queue
		if queue == QueueFollowsLimit {
			queue = vegas.FollowingQueue(s.Limit)
		}
		if string(s.Kind) != kind || s.Name != sp.Name || s.QueueCapacity != queue {
			t.Fatalf("Parse(%q).Stats() kind, name, queue = %q, %q, %d; want %q, %q, %d",
				spec, s.Kind, s.Name, s.QueueCapacity, kind, sp.Name, queue)
		}
	})
}

// TestExcerptAtItsLength checks excerpt at its edge: a text of exactly max
// bytes is quoted whole, one byte more is cut to max and says its length.
// (spec.go, excerpt's len(s) <= max.)
func TestExcerptAtItsLength(t *testing.T) {
	const max = 8
	tests := []struct {
		s, want string
	}{
		{"abcdefgh", `"abcdefgh"`},
		{"abcdefghi", `"abcdefgh"… (9 bytes)`},
	}
	for _, tt := range tests {
		if got := excerpt(tt.s, max); got != tt.want {
			t.Errorf("excerpt(%q, %d): got %s; want %s", tt.s, max, got, tt.want)
		}
	}
}
