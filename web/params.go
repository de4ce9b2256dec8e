package web

import (
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Param returns the path parameter name ("" if the route has none by that
// name). It is r.PathValue, here for symmetry with the typed forms.
func Param(r *http.Request, name string) string {
	return r.PathValue(name)
}

// ParamInt returns the path parameter name as an int. When it does not
// parse, the error is a 400 *Error naming the parameter.
func ParamInt(r *http.Request, name string) (int, error) {
	s := r.PathValue(name)
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, badRequest("path parameter %q: %q is not an integer", name, s)
	}
	return v, nil
}

// ParamInt64 is ParamInt for 64-bit values.
func ParamInt64(r *http.Request, name string) (int64, error) {
	s := r.PathValue(name)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, badRequest("path parameter %q: %q is not an integer", name, s)
	}
	return v, nil
}

// ParamFloat returns the path parameter name as a float64, or a 400 *Error
// naming the parameter. Only finite numbers are accepted: "NaN", "Inf",
// "-Inf", "infinity" and values beyond the range of a float64 (1e400) are
// refused.
func ParamFloat(r *http.Request, name string) (float64, error) {
	s := r.PathValue(name)
	v, not := parseFloat(s)
	if not != "" {
		return 0, badRequest("path parameter %q: %q is not %s", name, s, not)
	}
	return v, nil
}

// parseFloat parses s as strconv.ParseFloat does, but only into a finite
// decimal number. ParseFloat also reads "NaN" and "Inf" (any case, signed, or
// spelt "infinity") and turns a value beyond float64's range into ±Inf:
// numbers no handler expects, which slip through comparisons (NaN < x and
// NaN >= x are both false) and poison arithmetic. It also reads Go's literal
// syntax, underscores between digits ("1_000") and hexadecimal mantissas
// ("0x1p4"), which no HTTP client means as a number and which the integer
// parsers (strconv.Atoi, ParseInt in base 10) already refuse. On failure, not
// says what s is not, for the error message; it is "" on success.
func parseFloat(s string) (v float64, not string) {
	if strings.ContainsAny(s, "_xX") { // no decimal number, NaN or Inf has these
		return 0, "a number"
	}
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err == nil && !math.IsNaN(v) && !math.IsInf(v, 0):
		return v, ""
	case err != nil && !math.IsInf(v, 0): // a syntax error; out of range gives ±Inf
		return 0, "a number"
	default:
		return 0, "a finite number"
	}
}

// ParamBool returns the path parameter name as a bool (1, t, true, 0, f,
// false, …, as strconv.ParseBool), or a 400 *Error naming the parameter.
func ParamBool(r *http.Request, name string) (bool, error) {
	s := r.PathValue(name)
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, badRequest("path parameter %q: %q is not a boolean", name, s)
	}
	return v, nil
}
