package web_test

import (
	"errors"
	"io"
	"io/fs"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
)

// anyFS is a file system that refuses nothing: Open serves every name it is
// given, "..", absolute, backslashes and NUL bytes included, as a file whose
// content is "file " and the name, and records the name. Under it, a test of
// the static file server's guards fails when a guard is removed, instead of
// passing because os.Root or fstest.MapFS refuse the name on their own.
type anyFS struct {
	mu     sync.Mutex
	opened []string
}

func (f *anyFS) Open(name string) (fs.File, error) {
	f.mu.Lock()
	f.opened = append(f.opened, name)
	f.mu.Unlock()
	return &anyFile{Reader: strings.NewReader("file " + name), name: name}, nil
}

func (f *anyFS) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.opened)
}

type anyFile struct {
	*strings.Reader
	name string
}

func (f *anyFile) Stat() (fs.FileInfo, error) { return anyInfo{f}, nil }
func (f *anyFile) Close() error               { return nil }

type anyInfo struct{ f *anyFile }

func (i anyInfo) Name() string       { return i.f.name }
func (i anyInfo) Size() int64        { return i.f.Size() }
func (i anyInfo) Mode() fs.FileMode  { return 0o444 }
func (i anyInfo) ModTime() time.Time { return time.Time{} }
func (i anyInfo) IsDir() bool        { return false }
func (i anyInfo) Sys() any           { return nil }

// TestStaticGuardsWithAPermissiveFS checks the static file server's name
// guards where they stand: under anyFS, which would serve "../secret", each
// refused name must get a 404 without the file system being asked for it.
// Remove the fs.ValidPath check, the backslash and NUL check or the dotfile
// check from fileServer.serve and this test fails, whatever FS is used.
func TestStaticGuardsWithAPermissiveFS(t *testing.T) {
	if f, err := (&anyFS{}).Open("../secret"); err != nil || f == nil {
		t.Fatalf("anyFS.Open(../secret): got %v; want a file (the FS must refuse nothing)", err)
	}
	tests := []struct {
		name   string
		status int
	}{
		{"ok.txt", 200},
		{"dir/ok.txt", 200},
		{"dir/", 200}, // the trailing slash is trimmed: "dir" is opened
		{"", 200},     // the root: "." is opened
		{"../secret", 404},
		{"dir/../../secret", 404},
		{"dir/../ok.txt", 404}, // not cleaned: ".." is refused wherever it stands
		{"/etc/passwd", 404},
		{"dir//ok.txt", 404},
		{"./ok.txt", 404},
		{"..\\secret", 404},
		{"dir\\..\\..\\secret", 404},
		{"ok.txt\x00.png", 404},
		{".env", 404},
		{"dir/.git/config", 404},
	}
	for _, tt := range tests {
		spy := &anyFS{}
		h := web.Files(spy, "name")
		req := httptest.NewRequest("GET", "/", nil)
		req.SetPathValue("name", tt.name)
		rec := httptest.NewRecorder()
		err := h(rec, req)
		status := rec.Code
		var werr *web.Error
		if errors.As(err, &werr) {
			status = werr.Status
		} else if err != nil {
			t.Errorf("Files, name %q: got error %v; want a status", tt.name, err)
			continue
		}
		opened := spy.names()
		switch {
		case status != tt.status:
			t.Errorf("Files, name %q: got %d (FS asked for %q); want %d", tt.name, status, opened, tt.status)
		case tt.status == 404 && len(opened) != 0:
			t.Errorf("Files, name %q: the FS was asked for %q; want no call", tt.name, opened)
		case tt.status == 200 && len(opened) == 0:
			t.Errorf("Files, name %q: served without asking the FS", tt.name)
		}
	}
}

// TestStaticGuardsOverHTTP sends the refused names through a real server
// and Static, encoded as a client can encode them, to anyFS: none may
// reach it. A WithDotfiles route under the same FS serves the dotfile, so
// the refusal is the guard's, not the router's.
func TestStaticGuardsOverHTTP(t *testing.T) {
	spy := &anyFS{}
	app := newApp(t)
	app.Static("/s/", spy)
	app.Static("/dot/", spy, web.WithDotfiles())
	srv := httptest.NewServer(app)
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	tests := []struct {
		target string
		status int
		body   string
	}{
		{"/s/ok.txt", 200, "file ok.txt"},
		{"/s/%2e%2e%2fsecret", 404, ""},
		{"/s/dir%2f%2e%2e%2f%2e%2e%2fsecret", 404, ""},
		{"/s/..%5csecret", 404, ""},
		{"/s/%2fetc%2fpasswd", 404, ""},
		{"/s/ok.txt%00.png", 404, ""},
		{"/s/.env", 404, ""},
		{"/s/%2eenv", 404, ""},
		{"/dot/.env", 200, "file .env"},
	}
	for _, tt := range tests {
		before := len(spy.names())
		status, _, body := rawGet(t, addr, tt.target)
		asked := spy.names()[before:]
		if status != tt.status || (tt.status == 200 && body != tt.body) {
			t.Errorf("GET %s: got %d %q; want %d %q", tt.target, status, body, tt.status, tt.body)
		}
		if tt.status == 404 && len(asked) != 0 {
			t.Errorf("GET %s: the FS was asked for %q; want no call", tt.target, asked)
		}
	}
}

var _ io.Reader = (*anyFile)(nil)
