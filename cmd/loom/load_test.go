package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/loomrt/loom/load"
)

// execLoad runs `loom load args...` and returns what it wrote to stdout.
func execLoad(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newLoadCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestLoadCommand(t *testing.T) {
	defer goleak.VerifyNone(t)
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("X-Test") == "yes" {
			posts.Add(1)
		}
		w.Write([]byte("Hello World!"))
	}))
	defer srv.Close()
	dir := t.TempDir()

	out, err := execLoad(t, "-n", "40", "-c", "4", srv.URL)
	if err != nil || !strings.Contains(out, "40 requests in") || !strings.Contains(out, "Requests/sec:") {
		t.Errorf("text run: err %v, output:\n%s\nwant 40 requests in a wrk-like summary", err, out)
	}

	out, err = execLoad(t, "-n", "30", "-m", "POST", "-H", "X-Test: yes", "--body", "{}", "--expect-body", "World", "-o", "json", srv.URL)
	if err != nil {
		t.Fatalf("json run: %v", err)
	}
	var a load.Result
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("json output does not decode: %v", err)
	}
	if a.Requests != 30 || posts.Load() != 30 || a.Histogram == "" {
		t.Errorf("json run: requests %d, posts seen %d, histogram %d bytes; want 30, 30, some", a.Requests, posts.Load(), len(a.Histogram))
	}
	aPath := filepath.Join(dir, "a.json")
	os.WriteFile(aPath, []byte(out), 0o644)

	targets := filepath.Join(dir, "mix.txt")
	os.WriteFile(targets, []byte("GET "+srv.URL+"/\nPOST "+srv.URL+"/ {}\n  X-Test: yes\n"), 0o644)
	out, err = execLoad(t, "--targets", targets, "-n", "10", "-o", "json")
	if err != nil {
		t.Fatalf("targets run: %v", err)
	}
	bPath := filepath.Join(dir, "b.json")
	os.WriteFile(bPath, []byte(out), 0o644)
	if posts.Load() != 35 {
		t.Errorf("posts seen %d after the mix; want 35", posts.Load())
	}

	out, err = execLoad(t, "merge", "-o", "json", aPath, bPath)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	var merged load.Result
	if err := json.Unmarshal([]byte(out), &merged); err != nil || merged.Requests != 40 {
		t.Errorf("merged: err %v, requests %d; want 40", err, merged.Requests)
	}
}

func TestLoadCommandErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	notResult := filepath.Join(t.TempDir(), "other.json")
	os.WriteFile(notResult, []byte(`{"name": "something else"}`), 0o644)
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{}, "no URL"},
		{[]string{"-o", "xml", "http://x/"}, "output"},
		{[]string{"--expect-status", "abc", "http://x/"}, "expect-status"},
		{[]string{"-H", "novalue", "http://x/"}, "header"},
		{[]string{"--rate", "10", "-c", "5", "http://x/"}, "--max-conns"},
		{[]string{"--body", "a", "--body-file", "f", "http://x/"}, "not both"},
		{[]string{"--targets", "/nonexistent/file", "-n", "1"}, "targets"},
		{[]string{"https://x/"}, "scheme"},
		{[]string{"--targets", "t.txt", "-m", "POST"}, "drop -m"},
		{[]string{"-n", "2", "http://127.0.0.1:1/"}, "no request served"},
		{[]string{"merge", "/nonexistent.json"}, "read result"},
		{[]string{"merge", notResult}, "not a loom load result"},
	} {
		_, err := execLoad(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("loom load %v: %v; want an error mentioning %q", tc.args, err, tc.mention)
		}
	}
}
