package todoapp

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestListPage walks lists of each state page by page, at several page
// sizes, and checks that the pages put together are exactly List's answer.
func TestListPage(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(t testing.TB) *Store) {
		store := open(t)
		ctx := t.Context()
		for i := range 23 {
			todo, err := store.Create(ctx, fmt.Sprintf("todo %d", i))
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if i%3 == 0 {
				if _, err := store.Toggle(ctx, todo.ID); err != nil {
					t.Fatalf("Toggle: %v", err)
				}
			}
		}

		for _, state := range []State{StateAll, StateActive, StateCompleted} {
			want, err := store.List(ctx, state)
			if err != nil {
				t.Fatalf("List(%s): %v", state, err)
			}
			for _, limit := range []int{1, 2, 5, len(want) - 1, len(want), len(want) + 1, MaxPageLimit, 0} {
				pageSize := limit
				if limit == 0 {
					pageSize = DefaultPageLimit
				}
				var got []Todo
				page := Page{Limit: limit}
				for pages := 1; ; pages++ {
					todos, more, err := store.ListPage(ctx, state, page)
					if err != nil {
						t.Fatalf("ListPage(%s, %+v): %v", state, page, err)
					}
					if more && len(todos) != pageSize || !more && len(todos) > pageSize {
						t.Fatalf("ListPage(%s, %+v): got %d todos, more=%t; want %d, or at most %d on the last page",
							state, page, len(todos), more, pageSize, pageSize)
					}
					got = append(got, todos...)
					if !more {
						break
					}
					if pages > len(want) {
						t.Fatalf("ListPage(%s) limit %d: still more after %d pages", state, limit, pages)
					}
					page.After = todos[len(todos)-1].ID
				}
				if !slices.Equal(got, want) {
					t.Errorf("ListPage(%s) limit %d, all pages: got %v; want %v", state, limit, got, want)
				}
			}

			last := want[len(want)-1].ID
			todos, more, err := store.ListPage(ctx, state, Page{After: last})
			if err != nil || len(todos) != 0 || more {
				t.Errorf("ListPage(%s) after the last id: got %v, more=%t, %v; want [], false, nil", state, todos, more, err)
			}
		}

		for _, page := range []Page{{After: -1}, {Limit: -1}, {Limit: MaxPageLimit + 1}} {
			if _, _, err := store.ListPage(ctx, StateAll, page); !errors.Is(err, ErrBadPage) {
				t.Errorf("ListPage(%+v): got %v; want ErrBadPage", page, err)
			}
		}
		if _, _, err := store.ListPage(ctx, "done", Page{}); !errors.Is(err, ErrBadState) {
			t.Errorf("ListPage(done): got %v; want ErrBadState", err)
		}
	})
}

// TestListDefaultLimit checks that a list request without paging
// parameters sends DefaultPageLimit todos and a link to the rest.
func TestListDefaultLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(t testing.TB) *Store) {
		store := open(t)
		base := serve(t, store)
		var ids []int64
		for i := range DefaultPageLimit + 1 {
			todo, err := store.Create(t.Context(), fmt.Sprintf("todo %d", i))
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			ids = append(ids, todo.ID)
		}

		first, next := getPage(t, base+"/api/todos")
		if len(first) != DefaultPageLimit {
			t.Fatalf("GET /api/todos: got %d todos; want %d", len(first), DefaultPageLimit)
		}
		wantNext := fmt.Sprintf("%s/api/todos?after=%d", base, ids[DefaultPageLimit-1])
		if next != wantNext {
			t.Fatalf("GET /api/todos: got next page %q; want %q", next, wantNext)
		}
		rest, next := getPage(t, next)
		if len(rest) != 1 || rest[0].ID != ids[DefaultPageLimit] || next != "" {
			t.Errorf("second page: got %v, next %q; want the todo with id %d and no next page", rest, next, ids[DefaultPageLimit])
		}
	})
}

// TestListPagingWhileChanging follows the next links through a list while,
// between pages, todos are created, deleted and toggled both ahead of and
// behind the page reached. Each todo must come once, in id order; those
// changed ahead of the walk come as they ended up, or not at all if they
// were deleted or left the listed state.
func TestListPagingWhileChanging(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(t testing.TB) *Store) {
		store := open(t)
		base := serve(t, store)
		for _, state := range []State{StateAll, StateActive} {
			t.Run(string(state), func(t *testing.T) {
				reset(t, store)
				walkWhileChanging(t, store, base, state)
			})
		}
	})
}

func walkWhileChanging(t *testing.T, store *Store, base string, state State) {
	ctx := t.Context()
	model := map[int64]Todo{} // every todo in the database
	create := func(text string) Todo {
		todo, err := store.Create(ctx, text)
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		model[todo.ID] = todo
		return todo
	}
	toggle := func(id int64) {
		todo, err := store.Toggle(ctx, id)
		if err != nil {
			t.Fatalf("Toggle: %v", err)
		}
		model[id] = todo
	}
	remove := func(id int64) {
		if err := store.Delete(ctx, id); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		delete(model, id)
	}
	// ahead returns the existing ids greater than cursor, in order.
	ahead := func(cursor int64) []int64 {
		var ids []int64
		for id := range model {
			if id > cursor {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return ids
	}

	for i := range 30 {
		todo := create(fmt.Sprintf("todo %d", i))
		if i%4 == 3 {
			toggle(todo.ID)
		}
	}

	const limit = 4
	var got []Todo
	var deletedBehind []Todo
	next := fmt.Sprintf("%s/api/todos?limit=%d&state=%s", base, limit, state)
	for pages := 0; next != ""; pages++ {
		if pages > 50 {
			t.Fatalf("still a next page after %d pages", pages)
		}
		var page []Todo
		page, next = getPage(t, next)
		if next != "" && len(page) != limit {
			t.Errorf("page %d: got %d todos and a next page; want %d", pages, len(page), limit)
		}
		got = append(got, page...)
		if next == "" || len(page) == 0 {
			continue
		}

		cursor := page[len(page)-1].ID
		create(fmt.Sprintf("created after page %d", pages))
		if ids := ahead(cursor); len(ids) >= 3 {
			remove(ids[0])
			toggle(ids[1]) // for a list by state, it leaves the list or joins it
		}
		if pages%2 == 0 {
			// The oldest todo already listed and not yet deleted.
			gone := got[len(deletedBehind)]
			remove(gone.ID)
			deletedBehind = append(deletedBehind, gone)
		}
	}

	var want []Todo
	for _, todo := range model {
		if state == StateAll || !todo.Completed {
			want = append(want, todo)
		}
	}
	want = append(want, deletedBehind...)
	slices.SortFunc(want, func(a, b Todo) int { return cmp.Compare(a.ID, b.ID) })
	if !slices.Equal(got, want) {
		t.Errorf("walking %s todos while they changed:\ngot  %v\nwant %v", state, ids(got), ids(want))
	}
	if len(deletedBehind) == 0 || len(got) < 3*limit {
		t.Fatalf("the walk covered %d todos and deleted %d behind it; want a walk of several pages that deletes", len(got), len(deletedBehind))
	}
}

func ids(todos []Todo) []int64 {
	var ids []int64
	for _, todo := range todos {
		ids = append(ids, todo.ID)
	}
	return ids
}

// linkNext matches a Link header of one rel="next" link.
var linkNext = regexp.MustCompile(`^<([^>]*)>; rel="next"$`)

// getPage fetches one page of the list and returns it with the absolute
// URL of the next page, or "" when its response has no Link header.
func getPage(t *testing.T, pageURL string) ([]Todo, string) {
	t.Helper()
	resp, body := do(t, "GET", pageURL, "", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: got status %d (%s); want 200", pageURL, resp.StatusCode, body)
	}
	var todos []Todo
	if err := json.Unmarshal([]byte(body), &todos); err != nil {
		t.Fatalf("GET %s: body %.200q: %v", pageURL, body, err)
	}
	link := resp.Header.Get("Link")
	if link == "" {
		return todos, ""
	}
	m := linkNext.FindStringSubmatch(link)
	if m == nil {
		t.Fatalf("GET %s: got Link %q; want one rel=\"next\" link", pageURL, link)
	}
	next, err := resp.Request.URL.Parse(m[1])
	if err != nil {
		t.Fatalf("GET %s: Link target %q: %v", pageURL, m[1], err)
	}
	return todos, next.String()
}

func TestParsePage(t *testing.T) {
	tests := []struct {
		query   string
		want    Page
		wantErr string
	}{
		{"", Page{Limit: DefaultPageLimit}, ""},
		{"state=active&other=x", Page{Limit: DefaultPageLimit}, ""},
		{"limit=1", Page{Limit: 1}, ""},
		{"limit=500", Page{Limit: MaxPageLimit}, ""},
		{"limit=%2B7", Page{Limit: 7}, ""},
		{"after=0", Page{Limit: DefaultPageLimit}, ""},
		{"after=42&limit=10", Page{After: 42, Limit: 10}, ""},
		{"after=9223372036854775807", Page{After: 1<<63 - 1, Limit: DefaultPageLimit}, ""},

		{"limit=0", Page{}, `query parameter "limit": 0 is too small: want an integer from 1 to 500`},
		{"limit=-1", Page{}, `query parameter "limit": -1 is too small: want an integer from 1 to 500`},
		{"limit=501", Page{}, `query parameter "limit": 501 is too large: want an integer from 1 to 500`},
		{"limit=-99999999999999999999", Page{}, `query parameter "limit": -99999999999999999999 is too small: want an integer from 1 to 500`},
		{"limit=abc", Page{}, `query parameter "limit": "abc" is not an integer: want an integer from 1 to 500`},
		{"limit=%201", Page{}, `query parameter "limit": " 1" is not an integer: want an integer from 1 to 500`},
		{"limit=0x10", Page{}, `query parameter "limit": "0x10" is not an integer: want an integer from 1 to 500`},
		{"limit", Page{}, `query parameter "limit": empty: want an integer from 1 to 500`},
		{"limit=2&limit=2", Page{}, `query parameter "limit": given 2 times: want it once`},
		{"after=xyz", Page{}, `query parameter "after": "xyz" is not an integer: want an integer from 0 up`},
		{"after=-1", Page{}, `query parameter "after": -1 is too small: want an integer from 0 up`},
		{"after=9223372036854775808", Page{}, `query parameter "after": 9223372036854775808 is too large: want an integer from 0 up`},
		{"after=", Page{}, `query parameter "after": empty: want an integer from 0 up`},
		{"limit=5&after=1&after=2&after=3", Page{}, `query parameter "after": given 3 times: want it once`},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParsePage(q)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
			if !errors.Is(err, ErrBadPage) {
				t.Errorf("ParsePage(%q): got error %v; want ErrBadPage", tt.query, err)
			}
		}
		if got != tt.want || gotErr != tt.wantErr {
			t.Errorf("ParsePage(%q): got %+v, %q; want %+v, %q", tt.query, got, gotErr, tt.want, tt.wantErr)
		}
	}
}

// TestPageLinkEscapes checks that the next link carries the request's other
// query parameters, escaped, so that following it keeps the same list.
func TestPageLinkEscapes(t *testing.T) {
	got := nextLink("/api/todos", url.Values{"limit": {"2"}, "state": {"active"}, "x": {"a>b, c;d"}}, 9)
	want := `</api/todos?after=9&limit=2&state=active&x=a%3Eb%2C+c%3Bd>; rel="next"`
	if got != want {
		t.Errorf("got %s; want %s", got, want)
	}
	if strings.Count(got, "<") != 1 || strings.Count(got, ">") != 1 {
		t.Errorf("got %s; want the target's < and > escaped", got)
	}
}
