package loom

import (
	"context"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		spec    string
		kind    string
		name    string
		workers int
		queue   int
	}{
		{"virtual", "virtual", "", 0, 0},
		{"pool:64", "pool", "", 64, 64},
		{"pool:64,queue=1000", "pool", "", 64, 1000},
		{"pool:2,queue=0,full=reject", "pool", "", 2, 0},
		{"threads:3", "threads", "", 3, 3},
		{"thread-per-task", "thread-per-task", "", 0, 0},
		{"limit:500", "limit", "", 500, 0},
		{"limit:500,queue=100", "limit", "", 500, 100},
		{"limit:5,queue=1,full=wait,name=db", "limit", "db", 5, 1},
		{" pool : 8 , name = http ", "pool", "http", 8, 8},
		{"virtual,name=jobs", "virtual", "jobs", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			if err := ValidateSpec(tt.spec); err != nil {
				t.Errorf("ValidateSpec(%q) = %v; want nil", tt.spec, err)
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

func TestParseErrors(t *testing.T) {
	tests := []struct {
		spec string
		want string // a part of the error message
	}{
		{"", "no executor kind"},
		{"adaptive", `unknown executor kind "adaptive" (known: virtual, pool, threads, thread-per-task, limit)`},
		{"pool", `pool needs a workers count`},
		{"pool:x", `parse executor spec "pool:x": workers: strconv.Atoi: parsing "x": invalid syntax`},
		{"pool:0", "workers: 0 is not positive"},
		{"limit:-3", "limit: -3 is not positive"},
		{"virtual:4", "virtual takes no count"},
		{"pool:4,queue=-1", "queue: -1 is negative"},
		{"pool:4,queue=many", "queue: strconv.Atoi"},
		{"pool:4,queue=1,queue=2", `key "queue" given twice`},
		{"pool:4,colour=blue", `unknown key "colour" (known: queue, full, name)`},
		{"pool:4,fast", `option "fast" is not key=value`},
		{"pool:4,full=maybe", `full: "maybe" is neither reject nor wait`},
		{"virtual,queue=10", "queue does not apply to virtual executors"},
		{"thread-per-task,full=wait", "full does not apply to thread-per-task executors"},
		{"pool:4,name=", "name: empty"},
		{"pool:2000000", "workers: 2000000 is more than the most allowed, 1048576"},
		{"threads:20000", "workers: 20000 is more than the most allowed, 10000"},
		{"limit:9223372036854775807,queue=1", "limit: 9223372036854775807 is more than the most allowed"},
		{"limit:1,queue=99999999", "queue: 99999999 is more than the most allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			if err := ValidateSpec(tt.spec); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ValidateSpec(%q) = %v; want an error containing %q", tt.spec, err, tt.want)
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

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name     string
		general  string // LOOM_EXECUTOR
		specific string // LOOM_EXECUTOR_<NAME>
		kind     string
		wantName string
	}{
		{"http", "", "", "virtual", "http"},
		{"http", "pool:4", "", "pool", "http"},
		{"http", "pool:4", "limit:10", "limit", "http"},
		{"web-api.v2", "", "threads:2", "threads", "web-api.v2"},
		{"tasks", "limit:3,name=jobs", "", "limit", "jobs"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.general+"/"+tt.specific, func(t *testing.T) {
			t.Setenv("LOOM_EXECUTOR", tt.general)
			t.Setenv(EnvVar(tt.name), tt.specific)
			e, err := FromEnv(tt.name)
			if err != nil {
				t.Fatalf("FromEnv(%q): %v", tt.name, err)
			}
			defer shutdown(t, e)
			if s := e.Stats(); s.Kind != tt.kind || s.Name != tt.wantName {
				t.Errorf("FromEnv(%q) kind, name = %q, %q; want %q, %q", tt.name, s.Kind, s.Name, tt.kind, tt.wantName)
			}
		})
	}
}

func TestEnvVar(t *testing.T) {
	tests := []struct{ name, want string }{
		{"http", "LOOM_EXECUTOR_HTTP"},
		{"web-api.v2", "LOOM_EXECUTOR_WEB_API_V2"},
		{"GET /users", "LOOM_EXECUTOR_GET__USERS"},
		{"café", "LOOM_EXECUTOR_CAF_"},
		{"", "LOOM_EXECUTOR_"},
	}
	for _, tt := range tests {
		if got := EnvVar(tt.name); got != tt.want {
			t.Errorf("EnvVar(%q) = %q; want %q", tt.name, got, tt.want)
		}
	}
}

func TestFromEnvError(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR", "virtual")
	t.Setenv("LOOM_EXECUTOR_HTTP", "pool:x")
	_, err := FromEnv("http")
	want := `LOOM_EXECUTOR_HTTP: parse executor spec "pool:x": workers: `
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("FromEnv error = %v; want the prefix %q", err, want)
	}
	t.Setenv("LOOM_EXECUTOR_HTTP", "")
	t.Setenv("LOOM_EXECUTOR", "adaptive")
	_, err = FromEnv("http")
	want = `LOOM_EXECUTOR: parse executor spec "adaptive": unknown executor kind`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("FromEnv error = %v; want the prefix %q", err, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"virtual", "pool:64", "pool:64,queue=1000", "threads:2", "thread-per-task",
		"limit:500,queue=100", "limit:1,full=wait,name=x", "pool:x", "", ",", "pool:1,queue=1,queue=1",
		"limit:9223372036854775807,queue=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		kind, _, _ := strings.Cut(strings.TrimSpace(strings.Split(spec, ",")[0]), ":")
		kind = strings.TrimSpace(kind)
		sp, err := parseSpec(spec, nil)
		verr := ValidateSpec(spec)
		if err != nil {
			_, perr := Parse(spec)
			if perr == nil || !strings.HasPrefix(perr.Error(), "parse executor spec ") {
				t.Fatalf("Parse(%q) error = %v; want one starting %q", spec, perr, "parse executor spec ")
			}
			if verr == nil || verr.Error() != perr.Error() {
				t.Fatalf("ValidateSpec(%q) = %v; want Parse's error %v", spec, verr, perr)
			}
			return
		}
		if verr != nil {
			t.Fatalf("ValidateSpec(%q) = %v; want nil, as the spec parses", spec, verr)
		}
		if sp.kind != kind {
			t.Fatalf("parseSpec(%q).kind = %q; want %q", spec, sp.kind, kind)
		}
		if sp.n > 64 || sp.cfg.queue > 1024 {
			return // valid, but too big to build on every fuzz input
		}
		e := sp.build()
		defer func() {
			if err := e.Shutdown(context.Background()); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		}()
		if got := e.Stats().Kind; got != kind {
			t.Fatalf("Parse(%q).Stats().Kind = %q; want %q", spec, got, kind)
		}
	})
}

func TestParseWithOptions(t *testing.T) {
	e, err := Parse("pool:2,name=spec", Name("option"), Queue(5))
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, e)
	if s := e.Stats(); s.Name != "spec" || s.QueueCapacity != 5 {
		t.Errorf("name, queue = %q, %d; want the spec's name %q and the option's queue 5", s.Name, s.QueueCapacity, "spec")
	}
	if _, err := Parse("virtual", Queue(5)); err == nil || !strings.Contains(err.Error(), "do not apply to virtual") {
		t.Errorf("Parse(virtual, Queue(5)) error = %v; want one saying Queue does not apply", err)
	}
}

func TestFullPolicyString(t *testing.T) {
	tests := []struct {
		p    FullPolicy
		want string
	}{
		{Reject, "reject"},
		{Wait, "wait"},
		{0, "FullPolicy(0)"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("FullPolicy(%d).String() = %q; want %q", int(tt.p), got, tt.want)
		}
	}
}
