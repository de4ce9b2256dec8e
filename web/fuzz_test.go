package web_test

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/loomrt/loom/web"
)

// FuzzRoutePattern registers arbitrary patterns: registration either works
// or panics with a "web:" message, and serving any path afterwards never
// panics and answers with a sane status.
func FuzzRoutePattern(f *testing.F) {
	for _, seed := range []string{"/", "/a/{b}", "/a/{b...}", "/a/{$}", "/{x}/{y}", "a", "/a/{", "/a/{b}/{b}", "/%2e%2e/", "/a/{b...}/c", "/\x00"} {
		f.Add(seed, "/a/b")
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		app := newApp(t)
		app.Get("/fixed/{id}", text("fixed"))
		func() {
			defer func() {
				if v := recover(); v != nil {
					if msg, _ := v.(string); !strings.HasPrefix(msg, "web: ") {
						t.Fatalf("pattern %q: got panic %v; want a web: panic", pattern, v)
					}
				}
			}()
			app.Get(pattern, text("fuzzed"))
		}()
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest("GET", "http://test"+path, nil)
		if err != nil {
			return // not a URL a server would see
		}
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		if rec.Code != 200 && rec.Code != 301 && rec.Code != 307 && rec.Code != 308 && rec.Code != 404 && rec.Code != 400 {
			t.Errorf("pattern %q, path %q: got status %d", pattern, path, rec.Code)
		}
	})
}

// FuzzStaticPath requests arbitrary paths from a static route: it must
// never serve anything but the files in the FS.
func FuzzStaticPath(f *testing.F) {
	for _, seed := range []string{"a.txt", "../a.txt", "%2e%2e/a.txt", "..%2fa.txt", "/etc/passwd", "sub/../a.txt", "sub/", "a.txt%00", "..\\a.txt"} {
		f.Add(seed)
	}
	files := map[string]string{"a.txt": "A", "sub/b.txt": "B"}
	f.Fuzz(func(t *testing.T, name string) {
		app := newApp(t)
		fsys := make(fstestMap)
		for n, c := range files {
			fsys[n] = c
		}
		app.Static("/s/", fsys.fs())
		req, err := http.NewRequest("GET", "http://test/s/"+name, nil)
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		if rec.Code == 200 && rec.Body.String() != "A" && rec.Body.String() != "B" {
			t.Errorf("GET /s/%s: served %q", name, rec.Body.String())
		}
	})
}

// FuzzReadJSON feeds arbitrary bodies to JSON handlers, lenient and strict:
// the answer is a success or a 4xx, never a 500 or a panic.
func FuzzReadJSON(f *testing.F) {
	for _, seed := range []string{`{"text":"a"}`, `{"text":`, `[]`, `null`, `{"text":1}`, `{} {}`, "\xff", `{"text":"a","x":1}`, `{"\u00e9":1}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		app := newApp(t, web.WithBodyLimit(1<<10))
		same := func(r *http.Request, in todo) (todo, error) { return in, nil }
		app.Post("/", web.JSON(same))
		app.Post("/strict", web.JSON(same, web.WithDisallowUnknownFields()))
		for _, target := range []string{"/", "/strict"} {
			rec := do(t, app, "POST", target, body)
			if rec.Code != 200 && (rec.Code < 400 || rec.Code >= 500) {
				t.Errorf("POST %s body %q: got status %d %q", target, body, rec.Code, rec.Body.String())
			}
		}
	})
}

// FuzzFloatParams feeds arbitrary text to Value.Float and FloatOr of a path
// and a query parameter: the result is a finite number, or a 400 that quotes
// the text (or says an empty required one is required); never NaN or ±Inf,
// and never a number read from Go's literal syntax (1_000, 0x1p4).
func FuzzFloatParams(f *testing.F) {
	for _, seed := range []string{"1.5", "-0", "NaN", "-Inf", "infinity", "1e400", "0x1p-2", "1_000", "", " 1", "\xff"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		req := httptest.NewRequest("GET", "/", nil)
		req.URL.RawQuery = url.Values{"x": {s}}.Encode()
		req.SetPathValue("x", s)
		for name, parse := range map[string]func() (float64, error){
			"Param.Float":   func() (float64, error) { return web.Param(req, "x").Float() },
			"Query.FloatOr": func() (float64, error) { return web.Query(req, "x").FloatOr(0) },
		} {
			v, err := parse()
			var e *web.Error
			switch {
			case err == nil && (math.IsNaN(v) || math.IsInf(v, 0)):
				t.Errorf("%s(%q) = %v; want a finite number or an error", name, s, v)
			case err == nil && strings.ContainsAny(s, "_xX"):
				t.Errorf("%s(%q) = %v; want an error for Go literal syntax", name, s, v)
			case err != nil && s == "" && (!errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.HasSuffix(e.Message, "is required")):
				t.Errorf("%s(%q): got error %v; want a 400 saying it is required", name, s, err)
			case err != nil && s != "" && (!errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.Contains(e.Message, fmt.Sprintf("%q", s))):
				t.Errorf("%s(%q): got error %v; want a 400 quoting the value", name, s, err)
			}
		}
	})
}

// FuzzAcceptEncoding checks that any Accept-Encoding header yields a
// response that is identity, gzip or deflate, with the body intact.
func FuzzAcceptEncoding(f *testing.F) {
	for _, seed := range []string{"gzip", "deflate;q=0.5, gzip;q=0", "*;q=0", "gzip;q=abc", ",,;", "GZIP", "gzip;q=NaN, deflate;q=0.5"} {
		f.Add(seed)
	}
	big := strings.Repeat("x", 4096)
	f.Fuzz(func(t *testing.T, accept string) {
		app := newApp(t)
		app.Get("/", text(big), web.WithDecorators(web.Compress))
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("Accept-Encoding", accept)
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		switch enc := rec.Header().Get("Content-Encoding"); enc {
		case "":
			if rec.Body.String() != big {
				t.Errorf("Accept-Encoding %q: identity body altered", accept)
			}
		case "gzip", "deflate":
		default:
			t.Errorf("Accept-Encoding %q: got encoding %q", accept, enc)
		}
	})
}

// fstestMap builds a testing/fstest.MapFS from names and contents.
type fstestMap map[string]string

func (m fstestMap) fs() fstest.MapFS {
	out := fstest.MapFS{}
	for name, content := range m {
		out[name] = &fstest.MapFile{Data: []byte(content)}
	}
	return out
}
