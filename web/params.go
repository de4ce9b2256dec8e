package web

import (
	"math"
	"net/http"
	"strconv"
	"strings"
)

// A Value is one named input of a request: a path parameter (Param), a
// query parameter (Query), a form field (Form) or a cookie (Cookie). Every
// source follows one rule, spelt by the method called:
//
//   - String returns the text, "" when the value is absent;
//   - Required, Int, Int64, Float and Bool need the value: absent or empty,
//     or not of the type, it is a 400 *Error naming it ("query parameter
//     \"limit\": \"ten\" is not an integer");
//   - Or, IntOr, Int64Or, FloatOr and BoolOr return the default when the
//     value is absent or empty, and a 400 *Error naming it when it is there
//     but not of the type (the default is returned with that error).
//
// Numbers are decimal: Go's literal syntax (1_000, 0x10) is refused, and so
// are floats that are not finite (NaN, Inf, 1e400). Booleans are what
// strconv.ParseBool reads (1, t, true, 0, f, false, …). A form that does not
// parse makes every method that returns an error return the form's error
// (a 400, 408 or 413 *Error); String and Or cannot report it.
type Value struct {
	source string // "path parameter", "query parameter", "form field", "cookie"
	name   string
	text   string
	flag   bool  // a query parameter present without a value (?verbose): Bool reads it as true
	err    error // the form did not parse
}

// Param returns the path parameter name (r.PathValue).
func Param(r *http.Request, name string) Value {
	return Value{source: "path parameter", name: name, text: r.PathValue(name)}
}

// Query returns the first value of the query parameter name. Each call
// parses the query string; for many parameters, call r.URL.Query() once and
// read the url.Values.
func Query(r *http.Request, name string) Value {
	vs, present := r.URL.Query()[name]
	v := Value{source: "query parameter", name: name}
	if len(vs) > 0 {
		v.text = vs[0]
	}
	v.flag = present && v.text == ""
	return v
}

// QueryAll returns every value of a repeated query parameter, in order:
// for ?tag=a&tag=b, QueryAll(r, "tag") is ["a", "b"].
func QueryAll(r *http.Request, name string) []string {
	return r.URL.Query()[name]
}

// Form returns the first value of the form field name, body fields before
// query parameters, parsing the form first (see ParseForm).
func Form(r *http.Request, name string) Value {
	v := Value{source: "form field", name: name}
	if v.err = ParseForm(r); v.err == nil {
		v.text = r.FormValue(name)
	}
	return v
}

// Cookie returns the value of the cookie name.
func Cookie(r *http.Request, name string) Value {
	v := Value{source: "cookie", name: name}
	if c, err := r.Cookie(name); err == nil {
		v.text = c.Value
	}
	return v
}

// String returns the text of v, "" when it is absent.
func (v Value) String() string { return v.text }

// Or returns the text of v, or def when it is absent or empty.
func (v Value) Or(def string) string {
	if v.text == "" {
		return def
	}
	return v.text
}

// Required returns the text of v, or a 400 *Error naming it when it is
// absent or empty.
func (v Value) Required() (string, error) {
	if v.err != nil {
		return "", v.err
	}
	if v.text == "" {
		return "", v.missing()
	}
	return v.text, nil
}

// Int returns v as an int; see Value for the errors.
func (v Value) Int() (int, error) { return parse(v, false, 0, "an integer", strconv.Atoi) }

// IntOr returns v as an int, or def when it is absent or empty.
func (v Value) IntOr(def int) (int, error) { return parse(v, true, def, "an integer", strconv.Atoi) }

// Int64 returns v as an int64; see Value for the errors.
func (v Value) Int64() (int64, error) { return parse(v, false, 0, "an integer", parseInt64) }

// Int64Or returns v as an int64, or def when it is absent or empty.
func (v Value) Int64Or(def int64) (int64, error) {
	return parse(v, true, def, "an integer", parseInt64)
}

// Float returns v as a finite float64; see Value for the errors.
func (v Value) Float() (float64, error) { return parse(v, false, 0, "", parseFloat) }

// FloatOr returns v as a finite float64, or def when it is absent or empty.
func (v Value) FloatOr(def float64) (float64, error) { return parse(v, true, def, "", parseFloat) }

// Bool returns v as a bool; see Value for the errors. A query parameter
// present without a value (?verbose) is true.
func (v Value) Bool() (bool, error) {
	if v.flag {
		return true, nil
	}
	return parse(v, false, false, "a boolean", strconv.ParseBool)
}

// BoolOr returns v as a bool, or def when it is absent or empty. A query
// parameter present without a value (?verbose) is true.
func (v Value) BoolOr(def bool) (bool, error) {
	if v.flag {
		return true, nil
	}
	return parse(v, true, def, "a boolean", strconv.ParseBool)
}

// parse reads v with p. what names the type for the error; "" means p's
// error text says it (parseFloat's does).
func parse[T any](v Value, optional bool, def T, what string, p func(string) (T, error)) (T, error) {
	if v.err != nil {
		return def, v.err
	}
	if v.text == "" {
		if optional {
			return def, nil
		}
		return def, v.missing()
	}
	t, err := p(v.text)
	if err != nil {
		if what == "" {
			what = err.Error()
		}
		return def, badRequest("%s %q: %q is not %s", v.source, v.name, v.text, what)
	}
	return t, nil
}

func (v Value) missing() error {
	return badRequest("%s %q is required", v.source, v.name)
}

func parseInt64(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

// notNumber is parseFloat's error; its text completes "… is not ".
type notNumber string

func (e notNumber) Error() string { return string(e) }

// parseFloat parses s as strconv.ParseFloat does, but only into a finite
// decimal number. ParseFloat also reads "NaN" and "Inf" (any case, signed, or
// spelt "infinity") and turns a value beyond float64's range into ±Inf:
// numbers no handler expects, which slip through comparisons (NaN < x and
// NaN >= x are both false) and poison arithmetic. It also reads Go's literal
// syntax, underscores between digits ("1_000") and hexadecimal mantissas
// ("0x1p4"), which no HTTP client means as a number and which the integer
// parsers (strconv.Atoi, ParseInt in base 10) already refuse. Its error
// says what s is not: "a number" or "a finite number".
func parseFloat(s string) (float64, error) {
	if strings.ContainsAny(s, "_xX") { // no decimal number, NaN or Inf has these
		return 0, notNumber("a number")
	}
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err == nil && !math.IsNaN(v) && !math.IsInf(v, 0):
		return v, nil
	case err != nil && !math.IsInf(v, 0): // a syntax error; out of range gives ±Inf
		return 0, notNumber("a number")
	default:
		return 0, notNumber("a finite number")
	}
}
