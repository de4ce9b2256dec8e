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
// LOOM_EXECUTOR_<NAME> (name upper-cased, with '-' and '.' turned into '_'),
// else in LOOM_EXECUTOR, else "virtual". This is the one switch that moves a
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
// executor called name, such as LOOM_EXECUTOR_HTTP for "http".
func EnvVar(name string) string {
	r := strings.NewReplacer("-", "_", ".", "_")
	return EnvPrefix + "_" + r.Replace(strings.ToUpper(name))
}
