package loom

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// envPrefix is the environment variable that sets the default executor spec;
// envPrefix + "_" + NAME overrides it for the executor called name.
const envPrefix = "LOOM_EXECUTOR"

// FromEnv builds the executor called name from the one switch: the spec in
// LOOM_EXECUTOR_<NAME>, else fallback if it is not empty, else the spec in
// LOOM_EXECUTOR, else "virtual". <NAME> is name upper-cased, with every
// character other than a letter, digit or '_' turned into '_' ("web-api.v2"
// reads LOOM_EXECUTOR_WEB_API_V2); a variable set to spaces or nothing counts
// as unset. A malformed LOOM_EXECUTOR is an error even when another spec is
// used: a configuration error anywhere stops the start.
//
// The executor is named name unless the spec sets name=…; opts apply as in
// Spec.New. An error wraps ErrBadSpec and names the variable, or "fallback",
// and the bad part: LOOM_EXECUTOR_HTTP: parse executor spec "pool:x": ….
// Like Parse, FromEnv starts a pool's or threads' workers before it returns.
func FromEnv(name, fallback string, opts ...Option) (Executor, error) {
	s, source, err := specFromEnv(name, fallback)
	if err != nil {
		return nil, err
	}
	e, err := s.New(append([]Option{WithName(name)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return e, nil
}

// SpecFromEnv returns the spec FromEnv(name, fallback) would build, named
// name unless it sets name=…, and the same errors for malformed specs. It
// starts nothing: use it to check configuration before anything runs. The
// process's thread limit is checked by Spec.New, not here.
func SpecFromEnv(name, fallback string) (Spec, error) {
	s, _, err := specFromEnv(name, fallback)
	if err != nil {
		return Spec{}, err
	}
	if s.Name == "" {
		s.Name = name
	}
	return s, nil
}

// specFromEnv returns the spec for name and where it came from: a variable's
// name or "fallback".
func specFromEnv(name, fallback string) (Spec, string, error) {
	parse := func(source, spec string) (Spec, error) {
		s, err := ParseSpec(spec)
		if err != nil {
			return s, fmt.Errorf("%s: %w", source, err)
		}
		return s, nil
	}
	var general Spec
	var generalErr error
	generalSet := false
	if spec, ok := lookupEnv(envPrefix); ok {
		general, generalErr = parse(envPrefix, spec)
		generalSet = true
	}

	source, spec, ok := envVar(name), "", false
	if spec, ok = lookupEnv(source); !ok && fallback != "" {
		source, spec, ok = "fallback", fallback, true
	}
	if !ok {
		if generalErr != nil {
			return Spec{}, "", generalErr
		}
		if generalSet {
			return general, envPrefix, nil
		}
		return Spec{Kind: KindVirtual}, "default", nil
	}
	s, err := parse(source, spec)
	if err != nil || generalErr != nil {
		return Spec{}, "", errors.Join(generalErr, err)
	}
	return s, source, nil
}

// lookupEnv returns the variable's value, treating one that holds only
// spaces as unset.
func lookupEnv(variable string) (string, bool) {
	v, ok := os.LookupEnv(variable)
	if !ok || strings.TrimSpace(v) == "" {
		return "", false
	}
	return v, true
}

// envVar returns the variable FromEnv reads first for the executor called
// name: LOOM_EXECUTOR_ and the name upper-cased, with every character other
// than a letter, digit or '_' turned into '_', so that a shell can set it.
// "http" gives LOOM_EXECUTOR_HTTP, "web-api.v2" gives LOOM_EXECUTOR_WEB_API_V2
// and "GET /users" gives LOOM_EXECUTOR_GET__USERS.
func envVar(name string) string {
	return envPrefix + "_" + strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_':
			return r
		}
		return '_'
	}, name)
}
