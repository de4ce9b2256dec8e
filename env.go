package loom

import (
	"fmt"
	"os"
	"strings"
)

// EnvPrefix is the environment variable that sets the default executor spec;
// EnvPrefix + "_" + NAME overrides it for the executor called name.
const EnvPrefix = "LOOM_EXECUTOR"

// FromEnv builds the executor called name from the environment: the spec in
// LOOM_EXECUTOR_<NAME> (see EnvVar), else in LOOM_EXECUTOR, else "virtual";
// a variable set to an empty string counts as unset. This is the one switch that moves a
// whole application between execution models.
//
// The executor is named name unless the spec sets name=…; opts apply as in
// Parse. A bad spec is an error naming the variable and the bad part:
// LOOM_EXECUTOR_HTTP: parse executor spec "pool:x": workers: ….
func FromEnv(name string, opts ...Option) (Executor, error) {
	opts = append([]Option{Name(name)}, opts...)
	variable := EnvVar(name)
	spec, ok := os.LookupEnv(variable)
	if !ok || strings.TrimSpace(spec) == "" {
		variable = EnvPrefix
		spec, ok = os.LookupEnv(variable)
	}
	if !ok || strings.TrimSpace(spec) == "" {
		return Parse("virtual", opts...)
	}
	e, err := Parse(spec, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", variable, err)
	}
	return e, nil
}

// EnvVar returns the environment variable FromEnv reads first for the
// executor called name: LOOM_EXECUTOR_ and the name upper-cased, with every
// character other than a letter, digit or '_' turned into '_', so that a
// shell can set it. "http" gives LOOM_EXECUTOR_HTTP, "web-api.v2" gives
// LOOM_EXECUTOR_WEB_API_V2 and "GET /users" gives LOOM_EXECUTOR_GET__USERS.
func EnvVar(name string) string {
	return EnvPrefix + "_" + strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_':
			return r
		}
		return '_'
	}, name)
}
