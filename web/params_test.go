package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/loomrt/loom/web"
)

func TestTypedPathParams(t *testing.T) {
	app := newApp(t)
	app.Get("/int/{v}", func(w http.ResponseWriter, r *http.Request) error {
		v, err := web.ParamInt(r, "v")
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(w, v+1)
		return err
	})
	app.Get("/int64/{v}", func(w http.ResponseWriter, r *http.Request) error {
		v, err := web.ParamInt64(r, "v")
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(w, v)
		return err
	})
	app.Get("/bool/{v}", func(w http.ResponseWriter, r *http.Request) error {
		v, err := web.ParamBool(r, "v")
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(w, !v)
		return err
	})
	app.Get("/float/{v}", func(w http.ResponseWriter, r *http.Request) error {
		v, err := web.ParamFloat(r, "v")
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
		q, err := web.QueryRequired(r, "q")
		if err != nil {
			return err
		}
		page, err := web.QueryInt(r, "page", 1)
		if err != nil {
			return err
		}
		ratio, err := web.QueryFloat(r, "ratio", 0.5)
		if err != nil {
			return err
		}
		verbose, err := web.QueryBool(r, "verbose", false)
		if err != nil {
			return err
		}
		sort := web.QueryOr(r, "sort", "name")
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
