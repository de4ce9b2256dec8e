package bench

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestConcurrency(t *testing.T) {
	tests := []struct {
		model string
		want  int
	}{
		{"virtual", 0},
		{"thread-per-task", 0},
		{"pool:16", 16},
		{"threads:16", 16},
		{"limit:1000,queue=9000", 1000},
		{" limit : 8 ", 8},
		{"pool:x", 0},
		{"nbio/pool:16", 16},
		{"std/limit:8", 8},
		{"nbio/virtual", 0},
		{"peer:gin", 0},
	}
	for _, tt := range tests {
		if got := Concurrency(tt.model); got != tt.want {
			t.Errorf("Concurrency(%q) = %d; want %d", tt.model, got, tt.want)
		}
	}
}

func TestCatalogueIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Catalogue() {
		if seen[s.Name] {
			t.Errorf("scenario %q listed twice", s.Name)
		}
		seen[s.Name] = true
		for _, p := range []Plan{s.Full, s.Quick} {
			if len(p.Models) == 0 || (p.Connections == 0 && p.Rate == 0 && len(p.Phases) == 0) || p.Duration == 0 {
				t.Errorf("%s: plan %+v lacks models, connections or a duration", s.Name, p)
			}
			if s.Limit(p).Formula == "" {
				t.Errorf("%s: no limit formula", s.Name)
			}
		}
		if s.Workload == "" || s.Seed == "" || s.Changes == "" || (s.Serve == nil) == (s.ServeModel == nil) || s.Targets == nil || s.ExpectBody == "" {
			t.Errorf("%s: incomplete scenario", s.Name)
		}
		if s.Quick.Duration > s.Full.Duration {
			t.Errorf("%s: quick plan runs longer than the full one", s.Name)
		}
	}
	for _, name := range []string{"cask-ab", "cask-sleep", "cask-static", "cask-todo", "spring-500ms", "cpu", "pinning", "idle-conns"} {
		if !seen[name] {
			t.Errorf("catalogue lacks %s", name)
		}
	}
}

func TestWaitLimit(t *testing.T) {
	l := waitLimit(Plan{Connections: 400, Requests: 20000, Service: 500 * time.Millisecond})
	if l.PerSecond != 800 {
		t.Errorf("PerSecond = %v; want 800", l.PerSecond)
	}
	if !strings.Contains(l.Formula, "at least 25s") {
		t.Errorf("Formula = %q; want the 25 s floor", l.Formula)
	}
	if got := modelCap("pool:16", Plan{Connections: 100, Service: 100 * time.Millisecond}); got != 160 {
		t.Errorf("modelCap(pool:16) = %v; want 160", got)
	}
	if got := modelCap("limit:400", Plan{Connections: 400, Service: time.Second}); got != 0 {
		t.Errorf("modelCap(limit:400 at 400 connections) = %v; want 0 (no cap below the limit)", got)
	}
}

func TestLookup(t *testing.T) {
	if _, err := Lookup(Catalogue(), "cask-sleep"); err != nil {
		t.Errorf("Lookup(cask-sleep): %v", err)
	}
	_, err := Lookup(Catalogue(), "cask-slep")
	if !errors.Is(err, ErrUnknownScenario) || !strings.Contains(err.Error(), "cask-slep") {
		t.Errorf("Lookup(cask-slep) = %v; want ErrUnknownScenario naming it", err)
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-20000, "-20,000"}}
	for _, tt := range tests {
		if got := count(tt.n); got != tt.want {
			t.Errorf("count(%d) = %q; want %q", tt.n, got, tt.want)
		}
	}
}

func TestSplitModels(t *testing.T) {
	tests := []struct {
		list string
		want []string
	}{
		{"virtual", []string{"virtual"}},
		{"virtual,pool:16", []string{"virtual", "pool:16"}},
		{"virtual,limit:1000,queue=9000,pool:16", []string{"virtual", "limit:1000,queue=9000", "pool:16"}},
		{" limit:10, queue=20 , full=wait,peer:gin", []string{"limit:10,queue=20,full=wait", "peer:gin"}},
		{",,", nil},
		{"queue=5,virtual", []string{"queue=5", "virtual"}},
		{"nbio/limit:10,queue=20,std/pool:16", []string{"nbio/limit:10,queue=20", "std/pool:16"}},
		// A peer is a model of its own whatever its name holds; a part
		// without "=" is never an option, spec or not.
		{"limit:10,peer:x=y", []string{"limit:10", "peer:x=y"}},
		{"limit:10,bogus", []string{"limit:10", "bogus"}},
	}
	for _, tt := range tests {
		if got := SplitModels(tt.list); !slices.Equal(got, tt.want) {
			t.Errorf("SplitModels(%q) = %q; want %q", tt.list, got, tt.want)
		}
	}
}

func FuzzSplitModels(f *testing.F) {
	f.Add("virtual,limit:1000,queue=9000,pool:16")
	f.Add(" , queue=1,,pool:2, full=wait ")
	f.Fuzz(func(t *testing.T, list string) {
		models := SplitModels(list)
		var parts []string
		for _, p := range strings.Split(list, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		// Splitting loses nothing but blanks and keeps the order.
		if got, want := strings.Join(models, ","), strings.Join(parts, ","); got != want {
			t.Errorf("SplitModels(%q) = %q; rejoined %q, want %q", list, models, got, want)
		}
		for _, m := range models {
			if m == "" {
				t.Errorf("SplitModels(%q) holds an empty model", list)
			}
		}
	})
}

// TestWaitLimitFormula: the floor on the run's length is given only for a
// plan with a request count, rounded to a tenth of a second.
func TestWaitLimitFormula(t *testing.T) {
	for _, tt := range []struct {
		p    Plan
		want string
	}{
		{Plan{Connections: 100, Service: 100 * time.Millisecond}, "100 connections ÷ 100ms = 1,000 req/s"},
		{Plan{Connections: 3, Service: 100 * time.Millisecond, Requests: 1000}, "3 connections ÷ 100ms = 30 req/s; 1,000 requests take at least 33.3s"},
	} {
		if got := waitLimit(tt.p).Formula; got != tt.want {
			t.Errorf("waitLimit(%+v).Formula = %q; want %q", tt.p, got, tt.want)
		}
	}
}

// TestPinningLimitDefaultsToGosThreadLimit: a plan that sets no thread
// limit is bounded by Go's default, 10,000 threads.
func TestPinningLimitDefaultsToGosThreadLimit(t *testing.T) {
	for _, tc := range []struct {
		p    Plan
		want float64
	}{
		{Plan{Connections: 20000, Service: time.Second}, 10000},
		{Plan{Connections: 9999, Service: time.Second}, 9999},
		{Plan{Connections: 20000, MaxThreads: 500, Service: time.Second}, 500},
	} {
		l := pinningLimit(tc.p)
		if l.PerSecond != tc.want {
			t.Errorf("pinningLimit(%d connections, %d threads) = %v req/s (%s); want %v", tc.p.Connections, tc.p.MaxThreads, l.PerSecond, l.Formula, tc.want)
		}
	}
	if l := pinningLimit(Plan{Connections: 20000, Service: time.Second}); !strings.Contains(l.Formula, "10,000 threads allowed") {
		t.Errorf("formula %q; want it to name 10,000 threads allowed", l.Formula)
	}
}
