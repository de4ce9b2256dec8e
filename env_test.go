package loom

import (
	"errors"
	"strings"
	"testing"
)

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name     string
		general  string // LOOM_EXECUTOR
		specific string // LOOM_EXECUTOR_<NAME>
		fallback string
		kind     Kind
		wantName string
	}{
		{"http", "", "", "", KindVirtual, "http"},
		{"http", "pool:4", "", "", KindPool, "http"},
		{"http", "pool:4", "limit:10", "", KindLimit, "http"},
		{"web-api.v2", "", "threads:2", "", KindThreads, "web-api.v2"},
		{"tasks", "limit:3,name=jobs", "", "", KindLimit, "jobs"},
		{"http", " ", "  ", "", KindVirtual, "http"},
		// The fallback comes after the named variable and before LOOM_EXECUTOR.
		{"reports", "limit:500", "", "pool:2", KindPool, "reports"},
		{"reports", "limit:500", "threads:1", "pool:2", KindThreads, "reports"},
		{"reports", "", "", "limit:1,name=slow", KindLimit, "slow"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.general+"/"+tt.specific+"/"+tt.fallback, func(t *testing.T) {
			t.Setenv("LOOM_EXECUTOR", tt.general)
			t.Setenv(envVar(tt.name), tt.specific)
			sp, err := SpecFromEnv(tt.name, tt.fallback)
			if err != nil || sp.Kind != tt.kind || sp.Name != tt.wantName {
				t.Errorf("SpecFromEnv(%q, %q) = %+v, %v; want kind %q named %q", tt.name, tt.fallback, sp, err, tt.kind, tt.wantName)
			}
			e, err := FromEnv(tt.name, tt.fallback)
			if err != nil {
				t.Fatalf("FromEnv(%q, %q): %v", tt.name, tt.fallback, err)
			}
			defer shutdown(t, e)
			if s := e.Stats(); s.Kind != tt.kind || s.Name != tt.wantName {
				t.Errorf("FromEnv(%q, %q) kind, name = %q, %q; want %q, %q", tt.name, tt.fallback, s.Kind, s.Name, tt.kind, tt.wantName)
			}
		})
	}
}

func TestEnvVarName(t *testing.T) {
	tests := []struct{ name, want string }{
		{"http", "LOOM_EXECUTOR_HTTP"},
		{"web-api.v2", "LOOM_EXECUTOR_WEB_API_V2"},
		{"GET /users", "LOOM_EXECUTOR_GET__USERS"},
		{"café", "LOOM_EXECUTOR_CAF_"},
		{"", "LOOM_EXECUTOR_"},
		// Each range's ends and the characters just outside them:
		// '`' 'a' 'z' '{', '@' 'A' 'Z' '[', '/' '0' '9' ':'.
		{"`az{@AZ[/09:_", "LOOM_EXECUTOR__AZ__AZ__09__"},
	}
	for _, tt := range tests {
		if got := envVar(tt.name); got != tt.want {
			t.Errorf("envVar(%q) = %q; want %q", tt.name, got, tt.want)
		}
	}
}

func TestFromEnvError(t *testing.T) {
	tests := []struct {
		general, specific, fallback string
		want                        []string // prefixes of the error's lines
	}{
		{"virtual", "pool:x", "", []string{`LOOM_EXECUTOR_HTTP: parse executor spec "pool:x": workers: `}},
		{"elastic", "", "", []string{`LOOM_EXECUTOR: parse executor spec "elastic": unknown executor kind`}},
		{"", "", "pool:0", []string{`fallback: parse executor spec "pool:0": workers: 0 is not positive`}},
		// A malformed LOOM_EXECUTOR stops the start even when it is not used.
		{"pool:x", "virtual", "", []string{`LOOM_EXECUTOR: parse executor spec "pool:x"`}},
		{"pool:x", "", "virtual", []string{`LOOM_EXECUTOR: parse executor spec "pool:x"`}},
		{"pool:x", "limit:y", "", []string{`LOOM_EXECUTOR: parse executor spec "pool:x"`, `LOOM_EXECUTOR_HTTP: parse executor spec "limit:y"`}},
	}
	for _, tt := range tests {
		t.Setenv("LOOM_EXECUTOR", tt.general)
		t.Setenv("LOOM_EXECUTOR_HTTP", tt.specific)
		_, err := FromEnv("http", tt.fallback)
		_, serr := SpecFromEnv("http", tt.fallback)
		if err == nil || serr == nil || err.Error() != serr.Error() {
			t.Errorf("%+v: FromEnv error = %v, SpecFromEnv error = %v; want the same error", tt, err, serr)
			continue
		}
		if !errors.Is(err, ErrBadSpec) {
			t.Errorf("%+v: error %v does not wrap ErrBadSpec", tt, err)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != len(tt.want) {
			t.Errorf("%+v: error %q has %d lines; want %d", tt, err, len(lines), len(tt.want))
			continue
		}
		for i, want := range tt.want {
			if !strings.HasPrefix(lines[i], want) {
				t.Errorf("%+v: error line %q; want the prefix %q", tt, lines[i], want)
			}
		}
	}
}

// An error Spec.New finds (here the thread limit) names the variable too.
func TestFromEnvBuildErrorNamesVariable(t *testing.T) {
	t.Setenv("LOOM_EXECUTOR", "")
	t.Setenv("LOOM_EXECUTOR_HTTP", "threads:1048576")
	_, err := FromEnv("http", "")
	want := `LOOM_EXECUTOR_HTTP: build executor spec "threads:1048576": `
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, ErrThreadLimit) {
		t.Errorf("FromEnv error = %v; want ErrThreadLimit with the prefix %q", err, want)
	}
}
