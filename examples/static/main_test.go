package main

import (
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomrt/loom/internal/harness/cmdtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// serve starts the app on a free loopback port; cmdtest.Serve stops it at cleanup.
func serve(t *testing.T, files fs.FS) string {
	t.Helper()
	app, err := newApp(files)
	if err != nil {
		t.Fatal(err)
	}
	return cmdtest.Serve(t, app)
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	client := &http.Client{
		Transport:     &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "identity") // see the bytes as stored
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestServesEmbeddedAndDiskFiles(t *testing.T) {
	embeddedFiles, err := fs.Sub(embedded, "public")
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot("public")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()

	for name, files := range map[string]fs.FS{"embedded": embeddedFiles, "dir": root.FS()} {
		t.Run(name, func(t *testing.T) {
			url := serve(t, files)
			tests := []struct {
				path, contentType, contains string
				status                      int
			}{
				{"/static/", "text/html; charset=utf-8", "Served by loom", 200},
				{"/static/index.html", "text/html; charset=utf-8", "Served by loom", 200},
				{"/static/style.css", "text/css; charset=utf-8", "font-family", 200},
				{"/static/loom.png", "image/png", "\x89PNG", 200},
				{"/static/missing.txt", "", "", 404},
				{"/static/..%2fmain.go", "", "", 404},
				{"/", "", "", 302},
			}
			for _, tt := range tests {
				resp, body := get(t, url+tt.path)
				if resp.StatusCode != tt.status {
					t.Errorf("GET %s: got status %d; want %d", tt.path, resp.StatusCode, tt.status)
				}
				if tt.contentType != "" && resp.Header.Get("Content-Type") != tt.contentType {
					t.Errorf("GET %s: got Content-Type %q; want %q", tt.path, resp.Header.Get("Content-Type"), tt.contentType)
				}
				if !strings.Contains(body, tt.contains) {
					t.Errorf("GET %s: body does not contain %q", tt.path, tt.contains)
				}
				if tt.status == 200 && resp.Header.Get("ETag") == "" {
					t.Errorf("GET %s: no ETag", tt.path)
				}
			}
		})
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, args := range [][]string{{"-dir", missing}, {"-nope"}} {
		if err := run(t.Context(), args); err == nil {
			t.Errorf("run(%q): got nil error; want one", args)
		}
	}
}

func TestRunStopsCleanly(t *testing.T) {
	cmdtest.StopsCleanly(t, run, "-addr", "127.0.0.1:0")
}

func TestRunRejectsArguments(t *testing.T) {
	cmdtest.RejectsStrayArgument(t, run, "-addr", "127.0.0.1:0")
}
