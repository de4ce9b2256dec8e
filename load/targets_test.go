package load

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseTargets(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "todo.json"), []byte(`{"title":"from file"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	in := `# the todo mix
GET  http://127.0.0.1:8080/todos

POST http://127.0.0.1:8080/todos {"title": "inline"}
	Content-Type: application/json
	X-Trace: 1
POST http://127.0.0.1:8080/todos @todo.json
  Content-Type: application/json
DELETE	http://127.0.0.1:8080/todos/1
`
	got, err := ParseTargets(strings.NewReader(in), dir)
	if err != nil {
		t.Fatalf("ParseTargets: %v", err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d targets; want 4", len(got))
	}
	for i, want := range []struct{ method, url, body, contentType string }{
		{"GET", "http://127.0.0.1:8080/todos", "", ""},
		{"POST", "http://127.0.0.1:8080/todos", `{"title": "inline"}`, "application/json"},
		{"POST", "http://127.0.0.1:8080/todos", `{"title":"from file"}`, "application/json"},
		{"DELETE", "http://127.0.0.1:8080/todos/1", "", ""}, // a tab between the fields
	} {
		g := got[i]
		if g.Method != want.method || g.URL != want.url || string(g.Body) != want.body || g.Header.Get("Content-Type") != want.contentType {
			t.Errorf("target %d = %s %s %q %v; want %s %s %q Content-Type %s", i, g.Method, g.URL, g.Body, g.Header, want.method, want.url, want.body, want.contentType)
		}
	}
	if got[1].Header.Get("X-Trace") != "1" {
		t.Errorf("target 2 headers %v; want X-Trace: 1", got[1].Header)
	}

	for _, bad := range []struct{ name, in, mention string }{
		{"empty", "# nothing\n", "no requests"},
		{"no url", "GET\n", "line 1"},
		{"header first", "  X: y\nGET http://a/\n", "line 1"},
		{"bad header", "GET http://a/\n  nonsense\n", "line 2"},
		{"header name not a token", "GET http://a/\n  X Trace: 1\n", "line 2"},
		{"header without a name", "GET http://a/\n  : 1\n", "line 2"},
		{"missing file", "POST http://a/ @nope.json\n", "line 1"},
		{"ftp", "GET ftp://a/\n", "line 1"},
		{"bad method", "G(T http://a/\n", "line 1"},
	} {
		_, err := ParseTargets(strings.NewReader(bad.in), dir)
		if !errors.Is(err, ErrBadTargets) || !strings.Contains(err.Error(), bad.mention) {
			t.Errorf("%s: %v; want ErrBadTargets mentioning %q", bad.name, err, bad.mention)
		}
	}
}

func FuzzParseTargets(f *testing.F) {
	f.Add("GET http://127.0.0.1/\nPOST http://127.0.0.1/x body\n  Content-Type: text/plain\n")
	f.Add("# c\n\nDELETE http://h:1/a?b=c\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in string) {
		targets, err := ParseTargets(strings.NewReader(in), dir)
		if err != nil {
			return
		}
		for _, tg := range targets {
			if _, err := buildRequest(tg); err != nil {
				t.Fatalf("accepted target %+v does not build: %v", tg, err)
			}
		}
	})
}
