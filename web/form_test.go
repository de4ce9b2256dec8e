package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/loomrt/loom/web"
)

func TestURLEncodedForm(t *testing.T) {
	app := newApp(t)
	app.Post("/signup", func(w http.ResponseWriter, r *http.Request) error {
		name, err := web.Form(r, "name").Required()
		if err != nil {
			return err
		}
		age, err := web.Form(r, "age").IntOr(0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s is %d", name, age)
		return err
	})
	tests := []struct {
		form   url.Values
		status int
		body   string
	}{
		{url.Values{"name": {"Ann"}, "age": {"36"}}, 200, "Ann is 36"},
		{url.Values{"name": {"Bob"}}, 200, "Bob is 0"},
		{url.Values{"age": {"36"}}, 400, `form field "name" is required` + "\n"},
		{url.Values{"name": {"Ann"}, "age": {"old"}}, 400, `form field "age": "old" is not an integer` + "\n"},
		{url.Values{"name": {"Ann"}, "age": {"1_000"}}, 400, `form field "age": "1_000" is not an integer` + "\n"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("POST", "/signup", strings.NewReader(tt.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		if rec.Code != tt.status || rec.Body.String() != tt.body {
			t.Errorf("form %v: got %d %q; want %d %q", tt.form, rec.Code, rec.Body.String(), tt.status, tt.body)
		}
	}
}

func multipartBody(t *testing.T, fields map[string]string, fileField, fileName string, content []byte) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if fileField != "" {
		fw, err := mw.CreateFormFile(fileField, fileName)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(content); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

func TestMultipartUpload(t *testing.T) {
	app := newApp(t, web.WithBodyLimit(1<<20))
	app.Post("/upload", func(w http.ResponseWriter, r *http.Request) error {
		title, err := web.Form(r, "title").Required()
		if err != nil {
			return err
		}
		f, h, err := web.FormFile(r, "file")
		if err != nil {
			return err
		}
		defer f.Close()
		data, err := io.ReadAll(f)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s: %s, %d bytes, %q", title, h.Filename, len(data), data[:5])
		return err
	})
	srv := httptest.NewServer(app)
	defer srv.Close()

	post := func(body io.Reader, contentType string) (int, string) {
		t.Helper()
		resp, err := srv.Client().Post(srv.URL+"/upload", contentType, body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	content := append([]byte("hello"), bytes.Repeat([]byte{0}, 1000)...)
	body, ct := multipartBody(t, map[string]string{"title": "greeting"}, "file", "hello.bin", content)
	if status, got := post(body, ct); status != 200 || got != `greeting: hello.bin, 1005 bytes, "hello"` {
		t.Errorf("upload: got %d %q", status, got)
	}
	body, ct = multipartBody(t, map[string]string{"title": "nothing"}, "", "", nil)
	if status, got := post(body, ct); status != 400 || got != `form file "file" is required`+"\n" {
		t.Errorf("no file: got %d %q; want 400 naming the field", status, got)
	}
	body, ct = multipartBody(t, nil, "file", "big.bin", bytes.Repeat([]byte{1}, 2<<20))
	if status, _ := post(body, ct); status != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB upload over a 1 MiB limit: got %d; want 413", status)
	}
	if status, got := post(strings.NewReader("--x\r\nnonsense"), "multipart/form-data; boundary=x"); status != 400 || !strings.HasPrefix(got, "malformed form") {
		t.Errorf("malformed multipart: got %d %q; want 400 malformed form", status, got)
	}
}

func TestMultipartTempFilesRemovedBehindADecorator(t *testing.T) {
	// A file over DefaultMultipartMemory spills to a temporary file. net/http
	// removes those only for the request it made; a decorator that calls
	// r.WithContext hands the handler a copy, whose form it never sees.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	app := newApp(t)
	type key struct{}
	withValue := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), key{}, "v")))
		})
	}
	app.Post("/upload", func(w http.ResponseWriter, r *http.Request) error {
		f, _, err := web.FormFile(r, "file")
		if err != nil {
			return err
		}
		return f.Close()
	}, web.WithDecorators(withValue))
	srv := httptest.NewServer(app)
	defer srv.Close()

	body, ct := multipartBody(t, nil, "file", "big.bin", bytes.Repeat([]byte{1}, web.DefaultMultipartMemory+1<<20))
	resp, err := srv.Client().Post(srv.URL+"/upload", ct, body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("upload: got %d; want 200", resp.StatusCode)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("temporary files left after the request: got %d (%s); want 0", len(left), left[0].Name())
	}
}

// TestDefaultBodyLimit sends, to an App without WithBodyLimit, a body of
// exactly the documented 10 MiB and one of a byte more: the first is read
// in full, the second refused with 413. The edge is written out, not taken
// from DefaultBodyLimit, so that a wider default fails here.
func TestDefaultBodyLimit(t *testing.T) {
	const documented = 10 << 20
	app := newApp(t)
	app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, n)
		return err
	})
	if rec := do(t, app, "POST", "/", strings.Repeat("x", documented)); rec.Code != 200 || rec.Body.String() != fmt.Sprint(documented) {
		t.Errorf("body of 10 MiB: got %d %q; want 200 and all of it read", rec.Code, rec.Body.String())
	}
	if rec := do(t, app, "POST", "/", strings.Repeat("x", documented+1)); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("body of 10 MiB and a byte: got %d; want 413", rec.Code)
	}
}

func TestCookies(t *testing.T) {
	app := newApp(t)
	app.Post("/login", func(w http.ResponseWriter, r *http.Request) error {
		return web.SetCookie(w, r, &http.Cookie{Name: "session", Value: "abc123", MaxAge: 3600})
	})
	app.Get("/me", func(w http.ResponseWriter, r *http.Request) error {
		v, err := web.Cookie(r, "session").Required()
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, "session "+v)
		return err
	})
	app.Post("/logout", func(w http.ResponseWriter, r *http.Request) error {
		return web.DeleteCookie(w, r, &http.Cookie{Name: "session"})
	})

	req := httptest.NewRequest("POST", "/login", nil)
	req.Header.Set("X-Forwarded-Proto", "https")
	rec := httptest.NewRecorder()
	app.ServeHTTP(rec, req)
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("got %d cookies; want 1", len(cookies))
	}
	c := cookies[0]
	if c.Value != "abc123" || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.MaxAge != 3600 {
		t.Errorf("got cookie %s; want session=abc123 HttpOnly Secure SameSite=Lax Path=/ Max-Age=3600", c)
	}

	req = httptest.NewRequest("GET", "/me", nil)
	req.AddCookie(&http.Cookie{Name: "session", Value: "abc123"})
	rec = httptest.NewRecorder()
	app.ServeHTTP(rec, req)
	if rec.Body.String() != "session abc123" {
		t.Errorf("read cookie: got %q", rec.Body.String())
	}
	if rec := do(t, app, "GET", "/me", ""); rec.Code != 400 || rec.Body.String() != `cookie "session" is required`+"\n" {
		t.Errorf("no cookie: got %d %q", rec.Code, rec.Body.String())
	}

	rec = do(t, app, "POST", "/logout", "")
	cookies = rec.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != "session" || cookies[0].MaxAge >= 0 {
		t.Errorf("logout: got cookies %v; want session with Max-Age<0", cookies)
	}
}

// TestFormFromTheQueryAlone reads a form field from a GET that has a query
// string and no body nor Content-Type: Form parses it and finds the value.
func TestFormFromTheQueryAlone(t *testing.T) {
	app := newApp(t)
	app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
		v, err := web.Form(r, "q").Required()
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, v)
		return err
	})
	if rec := do(t, app, http.MethodGet, "/?q=loom", ""); rec.Code != http.StatusOK || rec.Body.String() != "loom" {
		t.Errorf("GET /?q=loom: got %d %q; want 200 %q", rec.Code, rec.Body.String(), "loom")
	}
}

// TestParseFormRefusesMalformedBodies: a malformed body is a 400, urlencoded
// or multipart, on an App with the default limits and on one without a
// body limit or timeout, whose bodies are not wrapped (body.go,
// expiredBody's ok; form.go, ParseForm's r.Form != nil); and FormFile on a
// body that is not multipart is the 400 of a missing file (form.go,
// FormFile's ErrNotMultipart).
func TestParseFormRefusesMalformedBodies(t *testing.T) {
	tests := []struct {
		name, contentType, body, path string
		want                          string
	}{
		{"urlencoded", "application/x-www-form-urlencoded", "a=%zz", "/parse", "malformed form"},
		{"multipart", "multipart/form-data; boundary=x", "--x\r\nnonsense", "/parse", "malformed form"},
		{"a file from an urlencoded body", "application/x-www-form-urlencoded", "a=1", "/file", `form file "f" is required`},
	}
	// A decorator that parsed the form with net/http's ParseForm, which
	// leaves a multipart body alone, does not make it parsed (form.go,
	// ParseForm's r.MultipartForm != nil || !isMultipart(r)).
	parsed := web.WithDecorators(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			next.ServeHTTP(w, r)
		})
	})
	for i, opts := range [][]web.AppOption{nil, {web.WithBodyLimit(0), web.WithBodyTimeout(0)}, {parsed}} {
		app := newApp(t, opts...)
		app.Post("/parse", func(w http.ResponseWriter, r *http.Request) error { return web.ParseForm(r) })
		app.Post("/file", func(w http.ResponseWriter, r *http.Request) error {
			_, _, err := web.FormFile(r, "f")
			return err
		})
		for _, tt := range tests {
			if i == 2 && tt.name == "urlencoded" {
				continue // the decorator's parse read that body, and had its error
			}
			req := httptest.NewRequest("POST", tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", tt.contentType)
			rec := httptest.NewRecorder()
			app.ServeHTTP(rec, req)
			if rec.Code != http.StatusBadRequest || !strings.HasPrefix(rec.Body.String(), tt.want) {
				t.Errorf("%s, App %d: got %d %q; want 400 %s", tt.name, i, rec.Code, rec.Body.String(), tt.want)
			}
		}
	}
}
