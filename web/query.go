package web

import (
	"net/http"
	"net/url"
	"strconv"
)

// Query returns the first value of the query parameter name, or "".
// Each call parses the query string; for many parameters, call
// r.URL.Query() once and read the url.Values (the raw parameters).
func Query(r *http.Request, name string) string {
	return r.URL.Query().Get(name)
}

// QueryOr returns the query parameter name, or def when it is absent or empty.
func QueryOr(r *http.Request, name, def string) string {
	if v := r.URL.Query().Get(name); v != "" {
		return v
	}
	return def
}

// QueryRequired returns the query parameter name, or a 400 *Error when it
// is absent or empty.
func QueryRequired(r *http.Request, name string) (string, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return "", badRequest("query parameter %q is required", name)
	}
	return v, nil
}

// QueryAll returns every value of a repeated query parameter, in order:
// for ?tag=a&tag=b, QueryAll(r, "tag") is ["a", "b"].
func QueryAll(r *http.Request, name string) []string {
	return r.URL.Query()[name]
}

// QueryInt returns the query parameter name as an int, def when it is
// absent or empty, and a 400 *Error naming it when it does not parse.
func QueryInt(r *http.Request, name string, def int) (int, error) {
	return queryParse(r.URL.Query(), name, def, "an integer", strconv.Atoi)
}

// QueryFloat is QueryInt for float64 values. As with ParamFloat, only
// finite numbers are accepted: "NaN", "Inf" and out-of-range values such as
// 1e400 are a 400 *Error naming the parameter, not a value.
func QueryFloat(r *http.Request, name string, def float64) (float64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	v, not := parseFloat(s)
	if not != "" {
		return def, badRequest("query parameter %q: %q is not %s", name, s, not)
	}
	return v, nil
}

// QueryBool is QueryInt for bool values (as strconv.ParseBool). A parameter
// present without a value (?verbose) counts as true.
func QueryBool(r *http.Request, name string, def bool) (bool, error) {
	q := r.URL.Query()
	if vs, ok := q[name]; ok && len(vs) > 0 && vs[0] == "" {
		return true, nil
	}
	return queryParse(q, name, def, "a boolean", strconv.ParseBool)
}

func queryParse[T any](q url.Values, name string, def T, what string, parse func(string) (T, error)) (T, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	v, err := parse(s)
	if err != nil {
		return def, badRequest("query parameter %q: %q is not %s", name, s, what)
	}
	return v, nil
}
