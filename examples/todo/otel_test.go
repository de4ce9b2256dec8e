package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"testing"
)

// lockedBuffer is a bytes.Buffer safe for the exporter's goroutine and the
// test's.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// TestRunOtel runs the command with -otel, creates a todo, stops it, and
// finds that request's server span in what it wrote: named by its route,
// with the route and status among its attributes.
func TestRunOtel(t *testing.T) {
	var out lockedBuffer
	spansOut = &out
	t.Cleanup(func() { spansOut = nil })
	serveAndStop(t, []string{"-db", filepath.Join(t.TempDir(), "todo.db"), "-otel"}, func(string) string { return "" })

	type attr struct {
		Key   string
		Value struct{ Value any }
	}
	var found bool
	var names []string
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	for {
		var span struct {
			Name       string
			SpanKind   int
			Attributes []attr
		}
		err := dec.Decode(&span)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("spans written are not JSON: %v\n%s", err, out.Bytes())
		}
		names = append(names, span.Name)
		if span.Name != "POST /api/todos" {
			continue
		}
		got := map[string]any{}
		for _, a := range span.Attributes {
			got[a.Key] = a.Value.Value
		}
		if got["http.route"] != "/api/todos" || got["http.response.status_code"] != float64(201) || span.SpanKind != 2 {
			t.Errorf("POST /api/todos span: kind %d, attributes %v; want server (2), route /api/todos, status 201", span.SpanKind, got)
		}
		found = true
	}
	if !found {
		t.Errorf("no span POST /api/todos among %q", names)
	}
}
