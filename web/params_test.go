package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loomrt/loom/web"
)

func TestTypedPathParams(t *testing.T) {
	app := newApp(t)
	app.Get("/int/{v}", func(w http.ResponseWriter, r *http.Request) error {
		v, err := web.Param(r, "v").Int()
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(w, v+1)
		return err
	})
	app.Get("/int64/{v}", func(w http.ResponseWriter, r *http.Request) error {
		v, err := web.Param(r, "v").Int64()
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(w, v)
		return err
	})
	app.Get("/bool/{v}", func(w http.ResponseWriter, r *http.Request) error {
		v, err := web.Param(r, "v").Bool()
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(w, !v)
		return err
	})
	app.Get("/float/{v}", func(w http.ResponseWriter, r *http.Request) error {
		v, err := web.Param(r, "v").Float()
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(w, v*2)
		return err
	})
	tests := []struct {
		target string
		status int
		body   string
	}{
		{"/int/41", 200, "42"},
		{"/int/-3", 200, "-2"},
		{"/int/abc", 400, `path parameter "v": "abc" is not an integer` + "\n"},
		{"/int/1.5", 400, `path parameter "v": "1.5" is not an integer` + "\n"},
		{"/int64/9000000000", 200, "9000000000"},
		{"/int64/9e9", 400, `path parameter "v": "9e9" is not an integer` + "\n"},
		{"/bool/true", 200, "false"},
		{"/bool/0", 200, "true"},
		{"/bool/maybe", 400, `path parameter "v": "maybe" is not a boolean` + "\n"},
		{"/float/1.25", 200, "2.5"},
		{"/float/one", 400, `path parameter "v": "one" is not a number` + "\n"},
		{"/float/-0.5e1", 200, "-10"},
		// strconv.ParseFloat reads these; a parameter must be a finite number.
		{"/float/NaN", 400, `path parameter "v": "NaN" is not a finite number` + "\n"},
		{"/float/nan", 400, `path parameter "v": "nan" is not a finite number` + "\n"},
		{"/float/Inf", 400, `path parameter "v": "Inf" is not a finite number` + "\n"},
		{"/float/+Inf", 400, `path parameter "v": "+Inf" is not a finite number` + "\n"},
		{"/float/-Inf", 400, `path parameter "v": "-Inf" is not a finite number` + "\n"},
		{"/float/infinity", 400, `path parameter "v": "infinity" is not a finite number` + "\n"},
		{"/float/-Infinity", 400, `path parameter "v": "-Infinity" is not a finite number` + "\n"},
		{"/float/1e400", 400, `path parameter "v": "1e400" is not a finite number` + "\n"},
		{"/float/-1e400", 400, `path parameter "v": "-1e400" is not a finite number` + "\n"},
		// Go's literal syntax is not HTTP input: no digit separators, no hex.
		{"/float/1_000", 400, `path parameter "v": "1_000" is not a number` + "\n"},
		{"/float/1_000.5", 400, `path parameter "v": "1_000.5" is not a number` + "\n"},
		{"/float/1e1_0", 400, `path parameter "v": "1e1_0" is not a number` + "\n"},
		{"/float/0x1p4", 400, `path parameter "v": "0x1p4" is not a number` + "\n"},
		{"/float/-0X1P-2", 400, `path parameter "v": "-0X1P-2" is not a number` + "\n"},
		{"/int/1_000", 400, `path parameter "v": "1_000" is not an integer` + "\n"},
		{"/int/0x10", 400, `path parameter "v": "0x10" is not an integer` + "\n"},
		{"/int64/1_000", 400, `path parameter "v": "1_000" is not an integer` + "\n"},
		{"/int64/0x10", 400, `path parameter "v": "0x10" is not an integer` + "\n"},
	}
	for _, tt := range tests {
		rec := do(t, app, "GET", tt.target, "")
		if rec.Code != tt.status || rec.Body.String() != tt.body {
			t.Errorf("GET %s: got %d %q; want %d %q", tt.target, rec.Code, rec.Body.String(), tt.status, tt.body)
		}
	}
}

func TestQueryParams(t *testing.T) {
	app := newApp(t)
	app.Get("/search", func(w http.ResponseWriter, r *http.Request) error {
		q, err := web.Query(r, "q").Required()
		if err != nil {
			return err
		}
		page, err := web.Query(r, "page").IntOr(1)
		if err != nil {
			return err
		}
		ratio, err := web.Query(r, "ratio").FloatOr(0.5)
		if err != nil {
			return err
		}
		verbose, err := web.Query(r, "verbose").BoolOr(false)
		if err != nil {
			return err
		}
		sort := web.Query(r, "sort").Or("name")
		tags := strings.Join(web.QueryAll(r, "tag"), ",")
		raw := r.URL.Query().Encode()
		_, err = fmt.Fprintf(w, "q=%s page=%d ratio=%g verbose=%t sort=%s tags=%s opt=%q raw=%s",
			q, page, ratio, verbose, sort, tags, web.Query(r, "opt"), raw)
		return err
	})
	tests := []struct {
		target string
		status int
		body   string
	}{
		{"/search?q=go", 200, `q=go page=1 ratio=0.5 verbose=false sort=name tags= opt="" raw=q=go`},
		{"/search?q=go&page=3&ratio=2&verbose&sort=date&tag=a&tag=b&opt=x", 200,
			`q=go page=3 ratio=2 verbose=true sort=date tags=a,b opt="x" raw=opt=x&page=3&q=go&ratio=2&sort=date&tag=a&tag=b&verbose=`},
		{"/search?q=go&verbose=no", 400, `query parameter "verbose": "no" is not a boolean` + "\n"},
		{"/search", 400, `query parameter "q" is required` + "\n"},
		{"/search?q=go&page=two", 400, `query parameter "page": "two" is not an integer` + "\n"},
		{"/search?q=go&ratio=half", 400, `query parameter "ratio": "half" is not a number` + "\n"},
		{"/search?q=go&ratio=1e-3", 200, `q=go page=1 ratio=0.001 verbose=false sort=name tags= opt="" raw=q=go&ratio=1e-3`},
		{"/search?q=go&ratio=NaN", 400, `query parameter "ratio": "NaN" is not a finite number` + "\n"},
		{"/search?q=go&ratio=%2BInf", 400, `query parameter "ratio": "+Inf" is not a finite number` + "\n"},
		{"/search?q=go&ratio=-inf", 400, `query parameter "ratio": "-inf" is not a finite number` + "\n"},
		{"/search?q=go&ratio=Infinity", 400, `query parameter "ratio": "Infinity" is not a finite number` + "\n"},
		{"/search?q=go&ratio=2e308", 400, `query parameter "ratio": "2e308" is not a finite number` + "\n"},
		{"/search?q=go&ratio=1_000", 400, `query parameter "ratio": "1_000" is not a number` + "\n"},
		{"/search?q=go&ratio=0x1p-2", 400, `query parameter "ratio": "0x1p-2" is not a number` + "\n"},
		{"/search?q=go&page=1_000", 400, `query parameter "page": "1_000" is not an integer` + "\n"},
		{"/search?q=go&page=0x10", 400, `query parameter "page": "0x10" is not an integer` + "\n"},
	}
	for _, tt := range tests {
		rec := do(t, app, "GET", tt.target, "")
		if rec.Code != tt.status || rec.Body.String() != tt.body {
			t.Errorf("GET %s: got %d %q; want %d %q", tt.target, rec.Code, rec.Body.String(), tt.status, tt.body)
		}
	}
}

// TestValueRule checks the one rule of Value on every source: String is ""
// when absent, the required forms refuse absent and empty values with a 400
// naming the source and name, the Or forms return the default for them.
func TestValueRule(t *testing.T) {
	app := newApp(t)
	report := func(w http.ResponseWriter, v web.Value) error {
		_, reqErr := v.Required()
		_, intErr := v.Int()
		n, orErr := v.IntOr(7)
		b, boolErr := v.BoolOr(false)
		_, err := fmt.Fprintf(w, "string=%q or=%q required=%v int=%v intOr=%d,%v boolOr=%t,%v",
			v.String(), v.Or("def"), reqErr, intErr, n, orErr, b, boolErr)
		return err
	}
	app.Get("/query", func(w http.ResponseWriter, r *http.Request) error { return report(w, web.Query(r, "n")) })
	app.Post("/form", func(w http.ResponseWriter, r *http.Request) error { return report(w, web.Form(r, "n")) })
	app.Get("/cookie", func(w http.ResponseWriter, r *http.Request) error { return report(w, web.Cookie(r, "n")) })
	app.Get("/path/{n...}", func(w http.ResponseWriter, r *http.Request) error { return report(w, web.Param(r, "n")) })

	form := func(body string) *http.Request {
		req := httptest.NewRequest("POST", "/form", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return req
	}
	cookie := func(value string) *http.Request {
		req := httptest.NewRequest("GET", "/cookie", nil)
		if value != "" {
			req.Header.Set("Cookie", "n="+value)
		}
		return req
	}
	tests := []struct {
		name string
		req  *http.Request
		want string
	}{
		{"query absent", httptest.NewRequest("GET", "/query", nil),
			`string="" or="def" required=query parameter "n" is required int=query parameter "n" is required intOr=7,<nil> boolOr=false,<nil>`},
		{"query empty", httptest.NewRequest("GET", "/query?n=", nil),
			`string="" or="def" required=query parameter "n" is required int=query parameter "n" is required intOr=7,<nil> boolOr=true,<nil>`},
		{"query 3", httptest.NewRequest("GET", "/query?n=3", nil),
			`string="3" or="3" required=<nil> int=<nil> intOr=3,<nil> boolOr=false,query parameter "n": "3" is not a boolean`},
		{"query x", httptest.NewRequest("GET", "/query?n=x", nil),
			`string="x" or="x" required=<nil> int=query parameter "n": "x" is not an integer intOr=7,query parameter "n": "x" is not an integer boolOr=false,query parameter "n": "x" is not a boolean`},
		{"form absent", form("m=1"),
			`string="" or="def" required=form field "n" is required int=form field "n" is required intOr=7,<nil> boolOr=false,<nil>`},
		{"form 1", form("n=1"),
			`string="1" or="1" required=<nil> int=<nil> intOr=1,<nil> boolOr=true,<nil>`},
		{"form malformed", form("n=%zz"),
			`string="" or="def" required=malformed form: invalid URL escape "%zz" int=malformed form: invalid URL escape "%zz" intOr=7,malformed form: invalid URL escape "%zz" boolOr=false,malformed form: invalid URL escape "%zz"`},
		{"cookie absent", cookie(""),
			`string="" or="def" required=cookie "n" is required int=cookie "n" is required intOr=7,<nil> boolOr=false,<nil>`},
		{"cookie 5", cookie("5"),
			`string="5" or="5" required=<nil> int=<nil> intOr=5,<nil> boolOr=false,cookie "n": "5" is not a boolean`},
		{"path 9", httptest.NewRequest("GET", "/path/9", nil),
			`string="9" or="9" required=<nil> int=<nil> intOr=9,<nil> boolOr=false,path parameter "n": "9" is not a boolean`},
		{"path empty", httptest.NewRequest("GET", "/path/", nil),
			`string="" or="def" required=path parameter "n" is required int=path parameter "n" is required intOr=7,<nil> boolOr=false,<nil>`},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, tt.req)
		if got := rec.Body.String(); rec.Code != 200 || got != tt.want {
			t.Errorf("%s: got %d %s; want 200 %s", tt.name, rec.Code, got, tt.want)
		}
	}
}
