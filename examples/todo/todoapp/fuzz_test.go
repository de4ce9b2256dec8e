package todoapp

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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

// FuzzParsePage feeds query strings to ParsePage: it must never panic; an
// error must wrap ErrBadPage and name limit or after; a Page it returns
// must be in range and hold the values the query gave.
func FuzzParsePage(f *testing.F) {
	for _, s := range []string{"", "limit=10", "after=5&limit=1", "limit=0", "limit=-1", "limit=abc",
		"limit=501", "after=xyz", "after=-1", "limit=", "limit=1&limit=2", "after=99999999999999999999", "limit=+3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		query, err := url.ParseQuery(rawQuery)
		if err != nil {
			t.Skip("not a query string the server would parse")
		}
		page, err := ParsePage(query)
		if err != nil {
			if !errors.Is(err, ErrBadPage) {
				t.Fatalf("ParsePage(%q): got error %v; want ErrBadPage", rawQuery, err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, `query parameter "limit": `) && !strings.HasPrefix(msg, `query parameter "after": `) {
				t.Fatalf("ParsePage(%q): got error %q; want it to name the parameter", rawQuery, msg)
			}
			return
		}
		if page.Limit < 1 || page.Limit > MaxPageLimit || page.After < 0 {
			t.Fatalf("ParsePage(%q): got %+v, out of range", rawQuery, page)
		}
		if s := query.Get("limit"); s != "" {
			if n, _ := strconv.Atoi(s); n != page.Limit {
				t.Fatalf("ParsePage(%q): got limit %d; want %s", rawQuery, page.Limit, s)
			}
		} else if page.Limit != DefaultPageLimit {
			t.Fatalf("ParsePage(%q): got limit %d without one given; want %d", rawQuery, page.Limit, DefaultPageLimit)
		}
		if s := query.Get("after"); s != "" {
			if n, _ := strconv.ParseInt(s, 10, 64); n != page.After {
				t.Fatalf("ParsePage(%q): got after %d; want %s", rawQuery, page.After, s)
			}
		}
	})
}
