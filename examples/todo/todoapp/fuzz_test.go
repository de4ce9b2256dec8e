package todoapp

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/loomrt/loom/web"
)

func FuzzParseState(f *testing.F) {
	for _, s := range []string{"", "all", "active", "completed", "Active", "done", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		state, err := ParseState(s)
		if err != nil {
			if !errors.Is(err, ErrBadState) {
				t.Fatalf("ParseState(%q): got error %v; want ErrBadState", s, err)
			}
			return
		}
		switch state {
		case StateAll, StateActive, StateCompleted:
		default:
			t.Fatalf("ParseState(%q): got state %q, not one of the three", s, state)
		}
	})
}

// FuzzReadText feeds request bodies that are valid JSON (as web.ReadJSON
// guarantees) to readText: it must never panic, must fail with a 400, and
// what it accepts must be exactly the "text" of a one-field object.
func FuzzReadText(f *testing.F) {
	for _, s := range []string{`{"text":"x"}`, `{}`, `{"text":1}`, `[]`, `null`, `"x"`,
		`{"text":"a","text":"b"}`, `{"Text":"x"}`, `{"text":null}`, `{"text":"x","y":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) {
			t.Skip("readText only sees valid JSON")
		}
		text, err := readText(json.RawMessage(body))
		if err != nil {
			var e *web.Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
				t.Fatalf("readText(%q): got error %v; want a 400 *web.Error", body, err)
			}
			return
		}
		var fields map[string]any
		if err := json.Unmarshal([]byte(body), &fields); err != nil {
			t.Fatalf("readText(%q) accepted a body that is not an object: %v", body, err)
		}
		if len(fields) != 1 {
			t.Fatalf("readText(%q) accepted %d fields; want only text", body, len(fields))
		}
		if want, _ := fields["text"].(string); fields["text"] != nil && text != want {
			t.Fatalf("readText(%q): got %q; want %q", body, text, want)
		}
	})
}
