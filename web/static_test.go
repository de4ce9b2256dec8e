package web_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/loomrt/loom/web"
)

// rawGet sends target exactly as given (no client-side cleaning or
// escaping) and returns the status and body.
func rawGet(t *testing.T, addr, target string, header ...string) (int, http.Header, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET " + target + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n"
	for _, h := range header {
		req += h + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

// staticTree makes root/public with files and a secret next to it, plus
// symlinks inside public pointing in and out.
func staticTree(t *testing.T) (public string) {
	t.Helper()
	dir := t.TempDir()
	public = filepath.Join(dir, "public")
	files := map[string]string{
		"public/index.html":      "<h1>home</h1>",
		"public/css/site.css":    "body{}",
		"public/docs/index.html": "<h1>docs</h1>",
		"public/big.txt":         strings.Repeat("0123456789", 100),
		"secret.txt":             "top secret",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../secret.txt", filepath.Join(public, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "secret.txt"), filepath.Join(public, "absolute.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("css/site.css", filepath.Join(public, "inside.css")); err != nil {
		t.Fatal(err)
	}
	return public
}

func TestStaticFromDirectory(t *testing.T) {
	root, err := os.OpenRoot(staticTree(t))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	app := newApp(t)
	app.Static("/static/", root.FS())
	srv := httptest.NewServer(app)
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	tests := []struct {
		target      string
		status      int
		contentType string
		body        string
	}{
		{"/static/", 200, "text/html; charset=utf-8", "<h1>home</h1>"},
		{"/static/index.html", 200, "text/html; charset=utf-8", "<h1>home</h1>"},
		{"/static/css/site.css", 200, "text/css; charset=utf-8", "body{}"},
		{"/static/docs/", 200, "text/html; charset=utf-8", "<h1>docs</h1>"},
		{"/static/docs", 200, "text/html; charset=utf-8", "<h1>docs</h1>"},
		{"/static/inside.css", 200, "text/css; charset=utf-8", "body{}"},
		{"/static/css/", 404, "", ""},
		{"/static/missing", 404, "", ""},
		// Traversal, plain and encoded: refused or cleaned to a path that is not served.
		{"/static/../secret.txt", 0, "", ""},
		{"/static/%2e%2e/secret.txt", 0, "", ""},
		{"/static/..%2fsecret.txt", 404, "", ""},
		{"/static/%2e%2e%2fsecret.txt", 404, "", ""},
		{"/static/css/..%2f..%2fsecret.txt", 404, "", ""},
		{"/static//etc/passwd", 0, "", ""},
		{"/static/%2fetc%2fpasswd", 404, "", ""},
		{"/static/..%5csecret.txt", 404, "", ""},
		// Symlinks leading out of the root.
		{"/static/escape.txt", 404, "", ""},
		{"/static/absolute.txt", 404, "", ""},
	}
	for _, tt := range tests {
		status, header, body := rawGet(t, addr, tt.target)
		if strings.Contains(body, "top secret") || strings.Contains(body, "root:") {
			t.Errorf("GET %s: leaked a file outside the root: %q", tt.target, body)
		}
		if tt.status == 0 {
			// net/http cleans these paths with a redirect (or 404s them); anything but success is fine.
			if status == 200 {
				t.Errorf("GET %s: got 200; want a refusal or redirect", tt.target)
			}
			continue
		}
		if status != tt.status {
			t.Errorf("GET %s: got status %d; want %d", tt.target, status, tt.status)
		}
		if tt.contentType != "" && header.Get("Content-Type") != tt.contentType {
			t.Errorf("GET %s: got Content-Type %q; want %q", tt.target, header.Get("Content-Type"), tt.contentType)
		}
		if tt.body != "" && body != tt.body {
			t.Errorf("GET %s: got body %q; want %q", tt.target, body, tt.body)
		}
	}
}

func TestStaticConditionalAndRange(t *testing.T) {
	mod := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fsys := fstest.MapFS{
		"a.txt": {Data: []byte("abcdefghij"), ModTime: mod},
		"b.js":  {Data: []byte("console.log(1)")}, // no ModTime, as in embed.FS
	}
	app := newApp(t)
	app.Static("/assets/", fsys)
	srv := httptest.NewServer(app)
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	status, header, body := rawGet(t, addr, "/assets/a.txt")
	etag := header.Get("ETag")
	if status != 200 || body != "abcdefghij" || etag == "" || header.Get("Last-Modified") != mod.Format(http.TimeFormat) {
		t.Fatalf("got %d %q ETag %q Last-Modified %q", status, body, etag, header.Get("Last-Modified"))
	}
	if status, _, _ := rawGet(t, addr, "/assets/a.txt", "If-None-Match: "+etag); status != 304 {
		t.Errorf("If-None-Match with the ETag: got %d; want 304", status)
	}
	if status, _, _ := rawGet(t, addr, "/assets/a.txt", "If-Modified-Since: "+mod.Format(http.TimeFormat)); status != 304 {
		t.Errorf("If-Modified-Since: got %d; want 304", status)
	}
	status, header, body = rawGet(t, addr, "/assets/a.txt", "Range: bytes=2-4")
	if status != 206 || body != "cde" || header.Get("Content-Range") != "bytes 2-4/10" {
		t.Errorf("Range: got %d %q %q; want 206 \"cde\" bytes 2-4/10", status, body, header.Get("Content-Range"))
	}
	status, header, body = rawGet(t, addr, "/assets/b.js")
	jsTag := header.Get("ETag")
	if status != 200 || body != "console.log(1)" || jsTag == "" || !strings.Contains(header.Get("Content-Type"), "javascript") {
		t.Errorf("file without ModTime: got %d %q ETag %q type %q", status, body, jsTag, header.Get("Content-Type"))
	}
	if status, _, _ := rawGet(t, addr, "/assets/b.js", "If-None-Match: "+jsTag); status != 304 {
		t.Errorf("content-hash ETag revalidation: got %d; want 304", status)
	}
}

func TestStaticPrefixMustEndWithSlash(t *testing.T) {
	defer func() {
		if v := fmt.Sprint(recover()); !strings.HasPrefix(v, "web: ") {
			t.Errorf("got panic %q; want a web: panic", v)
		}
	}()
	newApp(t).Static("/static", fstest.MapFS{})
}

// Files serves a wildcard of any name, so it composes with Handle.
func TestFilesWithNamedWildcard(t *testing.T) {
	app := newApp(t)
	app.Get("/dl/{file...}", web.Files(fstest.MapFS{"x/y.txt": {Data: []byte("y")}}, "file"))
	if rec := do(t, app, "GET", "/dl/x/y.txt", ""); rec.Code != 200 || rec.Body.String() != "y" {
		t.Errorf("got %d %q; want 200 y", rec.Code, rec.Body.String())
	}
}

// TestStaticRefusesNUL checks the guard itself: the MapFS holds a name with
// a NUL byte (fs.ValidPath allows it), so without the guard it is served.
// From a directory, os.Root refuses such a name with EINVAL, which was a 500
// and an ERROR line; now both are a 404.
func TestStaticRefusesNUL(t *testing.T) {
	var logs logBuffer
	app := newApp(t, logs.logger())
	app.Static("/map/", fstest.MapFS{
		"index.html\x00":     {Data: []byte("nul name")},
		"index.html":         {Data: []byte("home")},
		"dir\x00/index.html": {Data: []byte("nul dir")},
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("home"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	app.Static("/dir/", root.FS())
	srv := httptest.NewServer(app)
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	tests := []struct {
		target string
		status int
	}{
		{"/map/index.html", 200},
		{"/map/index.html%00", 404},
		{"/map/dir%00/index.html", 404},
		{"/map/dir%00/", 404},
		{"/dir/index.html", 200},
		{"/dir/index.html%00", 404},
		{"/dir/%00", 404},
	}
	for _, tt := range tests {
		if status, _, body := rawGet(t, addr, tt.target); status != tt.status {
			t.Errorf("GET %s: got %d %q; want %d", tt.target, status, body, tt.status)
		}
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a NUL in a path was logged as an error:\n%s", logs.String())
	}
}

// TestStaticRefusesDotfiles checks that names with an element that begins
// with "." are refused by default, at the root and nested, from a directory
// and from Files, and served with WithDotfiles.
func TestStaticRefusesDotfiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		".env":                  "SECRET=1",
		".git/config":           "[core]",
		".well-known/security":  "contact",
		"docs/.hidden":          "hidden",
		"docs/.private/a.txt":   "private",
		"ok.txt":                "ok",
		"docs/file.with.dot.js": "dots",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	app := newApp(t)
	app.Static("/s/", root.FS())
	app.Static("/open/", root.FS(), web.WithDotfiles())
	app.Group("/g", web.WithDotfiles()).Static("/open/", root.FS())
	app.Get("/files/{name...}", web.Files(root.FS(), "name"))
	app.Get("/openfiles/{name...}", web.Files(root.FS(), "name", web.WithDotfiles()))
	srv := httptest.NewServer(app)
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	tests := []struct {
		path   string
		hidden bool // refused unless dotfiles are allowed
		body   string
	}{
		{".env", true, "SECRET=1"},
		{".git/config", true, "[core]"},
		{".well-known/security", true, "contact"},
		{"docs/.hidden", true, "hidden"},
		{"docs/.private/a.txt", true, "private"},
		{"%2eenv", true, "SECRET=1"},
		{"ok.txt", false, "ok"},
		{"docs/file.with.dot.js", false, "dots"},
	}
	for _, tt := range tests {
		for _, prefix := range []string{"/s/", "/files/", "/open/", "/g/open/", "/openfiles/"} {
			allowed := strings.Contains(prefix, "open")
			status, _, body := rawGet(t, addr, prefix+tt.path)
			switch {
			case tt.hidden && !allowed && status != 404:
				t.Errorf("GET %s%s: got %d %q; want 404", prefix, tt.path, status, body)
			case (!tt.hidden || allowed) && (status != 200 || body != tt.body):
				t.Errorf("GET %s%s: got %d %q; want 200 %q", prefix, tt.path, status, body, tt.body)
			}
		}
	}
}
