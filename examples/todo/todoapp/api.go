package todoapp

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/loomrt/loom/web"
)

// handlers holds the JSON handlers of /api/todos.
type handlers struct {
	store *Store
}

// cleared is the response of POST /api/todos/clear-completed.
type cleared struct {
	Removed int64 `json:"removed"`
}

// list sends one page of the list as a bare JSON array, the shape the API
// had before it paged, and a Link header with rel="next" when another page
// follows. (An object wrapping the array and a cursor would have broken
// every client that reads the array.)
func (a *handlers) list(w http.ResponseWriter, r *http.Request) error {
	query := r.URL.Query()
	state, err := ParseState(query.Get("state"))
	if err != nil {
		return web.Errorf(http.StatusBadRequest, "query parameter %q: %v", "state", err)
	}
	page, err := ParsePage(query)
	if err != nil {
		return &web.Error{Status: http.StatusBadRequest, Message: err.Error()}
	}
	todos, more, err := a.store.ListPage(r.Context(), state, page)
	if err != nil {
		return httpError(err)
	}
	if more {
		w.Header().Set("Link", nextLink(r.URL.Path, query, todos[len(todos)-1].ID))
	}
	return web.WriteJSON(w, http.StatusOK, todos)
}

// nextLink is the Link header value (RFC 8288) pointing at the page after
// the todo with id last: the same path and query, with after set to last.
func nextLink(path string, query url.Values, last int64) string {
	next := maps.Clone(query)
	next.Set("after", strconv.FormatInt(last, 10))
	u := url.URL{Path: path, RawQuery: next.Encode()}
	return "<" + u.String() + `>; rel="next"`
}

func (a *handlers) get(r *http.Request, _ web.Empty) (Todo, error) {
	id, err := web.Param(r, "id").Int64()
	if err != nil {
		return Todo{}, err
	}
	t, err := a.store.Get(r.Context(), id)
	return t, httpError(err)
}

func (a *handlers) create(r *http.Request, body json.RawMessage) (web.Created[Todo], error) {
	text, err := readText(body)
	if err != nil {
		return web.Created[Todo]{}, err
	}
	t, err := a.store.Create(r.Context(), text)
	return web.Created[Todo]{Value: t}, httpError(err)
}

func (a *handlers) update(r *http.Request, body json.RawMessage) (Todo, error) {
	id, err := web.Param(r, "id").Int64()
	if err != nil {
		return Todo{}, err
	}
	text, err := readText(body)
	if err != nil {
		return Todo{}, err
	}
	t, err := a.store.Update(r.Context(), id, text)
	return t, httpError(err)
}

func (a *handlers) toggle(r *http.Request, _ web.Empty) (Todo, error) {
	id, err := web.Param(r, "id").Int64()
	if err != nil {
		return Todo{}, err
	}
	t, err := a.store.Toggle(r.Context(), id)
	return t, httpError(err)
}

func (a *handlers) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := web.Param(r, "id").Int64()
	if err != nil {
		return err
	}
	if err := a.store.Delete(r.Context(), id); err != nil {
		return httpError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *handlers) clearCompleted(r *http.Request, _ web.Empty) (cleared, error) {
	n, err := a.store.ClearCompleted(r.Context())
	return cleared{Removed: n}, httpError(err)
}

// readText takes the text out of a {"text": "…"} body that web.ReadJSON
// has already checked for size, content type and syntax. Unknown fields are
// refused, so that a misspelt field, or one the API does not support such as
// "completed", is reported rather than silently ignored.
func readText(body json.RawMessage) (string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return "", web.Errorf(http.StatusBadRequest, `JSON body is not an object: want {"text": "…"}`)
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if name != "text" {
			return "", web.Errorf(http.StatusBadRequest, `unknown JSON field %q: want {"text": "…"}`, name)
		}
	}
	raw, ok := fields["text"]
	if !ok {
		return "", web.Errorf(http.StatusBadRequest, `missing JSON field "text"`)
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return "", web.Errorf(http.StatusBadRequest, `JSON field "text": want a string, got %s`, jsonKind(raw))
	}
	return text, nil
}

// httpError gives the store's errors their HTTP status and a message for
// the client. Other errors stay as they are: web logs them and sends a bare
// 500.
func httpError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNotFound) {
		return &web.Error{Status: http.StatusNotFound, Message: err.Error()}
	}
	for _, bad := range []error{ErrEmptyText, ErrTextTooLong, ErrBadState, ErrBadPage} {
		if errors.Is(err, bad) {
			return &web.Error{Status: http.StatusBadRequest, Message: bad.Error()}
		}
	}
	return err
}

// jsonKind names the kind of a valid JSON value for an error message, which
// should not echo a value that may be megabytes long.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
