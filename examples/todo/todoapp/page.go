package todoapp

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
)

// The sizes of a page of todos. The maximum bounds a response: a todo's
// text may be 1000 characters, so a full page is at most a few megabytes.
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 500
)

// ErrBadPage is returned for a Page, or paging query parameters, out of
// range or not parsing.
var ErrBadPage = errors.New("bad page")

// A Page selects a run of a list in id order: the first Limit todos whose
// ids are greater than After. Because ids only grow and are never reused,
// walking a list page by page, each page starting after the last id of the
// one before, neither repeats nor skips a todo, however the list changes in
// between: a todo created meanwhile comes on a later page; one deleted or,
// for a list by state, toggled out of it before its page is read is not
// listed.
type Page struct {
	// After is the id of the last todo of the previous page; 0 starts at
	// the first todo. It must not be negative.
	After int64
	// Limit is the most todos the page holds, 1 to MaxPageLimit; 0 means
	// DefaultPageLimit.
	Limit int
}

// check returns an error wrapping ErrBadPage if p is out of range.
func (p Page) check() error {
	if p.After < 0 {
		return &badPageError{fmt.Sprintf("after %d is negative: want a todo id, or 0 for the first page", p.After)}
	}
	if p.Limit < 0 || p.Limit > MaxPageLimit {
		return &badPageError{fmt.Sprintf("limit %d is out of range: want 1 to %d, or 0 for %d", p.Limit, MaxPageLimit, DefaultPageLimit)}
	}
	return nil
}

// ParsePage reads the paging parameters of a list request from its query:
// limit, an integer from 1 to MaxPageLimit, DefaultPageLimit when absent;
// after, a todo id (0 or more), 0 when absent. A parameter that is empty,
// repeated, not an integer or out of range is an error wrapping ErrBadPage
// whose message names the parameter and what was wrong with it. Other
// parameters are left for the caller.
func ParsePage(query url.Values) (Page, error) {
	page := Page{Limit: DefaultPageLimit}
	limit, ok, err := queryInt(query, "limit", 1, MaxPageLimit)
	if err != nil {
		return Page{}, err
	}
	if ok {
		page.Limit = int(limit)
	}
	page.After, _, err = queryInt(query, "after", 0, math.MaxInt64)
	if err != nil {
		return Page{}, err
	}
	return page, nil
}

// queryInt parses the query parameter name as an integer from low to high;
// a high of math.MaxInt64 is no bound. ok reports whether it was present.
func queryInt(query url.Values, name string, low, high int64) (n int64, ok bool, err error) {
	want := fmt.Sprintf("want an integer from %d to %d", low, high)
	if high == math.MaxInt64 {
		want = fmt.Sprintf("want an integer from %d up", low)
	}
	values, ok := query[name]
	switch {
	case !ok:
		return 0, false, nil
	case len(values) > 1:
		return 0, true, paramError(name, "given %d times: want it once", len(values))
	case values[0] == "":
		return 0, true, paramError(name, "empty: %s", want)
	}
	s := values[0]
	n, err = strconv.ParseInt(s, 10, 64)
	// An integer too long for int64 is out of range whatever the bounds.
	tooSmall := errors.Is(err, strconv.ErrRange) && s[0] == '-' || err == nil && n < low
	tooLarge := errors.Is(err, strconv.ErrRange) && s[0] != '-' || err == nil && n > high
	switch {
	case tooSmall:
		// %.40s and %.40q show at most 40 characters of a value that may be long.
		return 0, true, paramError(name, "%.40s is too small: %s", s, want)
	case tooLarge:
		return 0, true, paramError(name, "%.40s is too large: %s", s, want)
	case err != nil:
		return 0, true, paramError(name, "%.40q is not an integer: %s", s, want)
	}
	return n, true, nil
}

func paramError(name, format string, args ...any) error {
	return &badPageError{fmt.Sprintf("query parameter %q: ", name) + fmt.Sprintf(format, args...)}
}

// badPageError is an ErrBadPage with a message of its own, so that the
// client sees what was wrong without a "bad page" prefix.
type badPageError struct{ msg string }

func (e *badPageError) Error() string        { return e.msg }
func (e *badPageError) Is(target error) bool { return target == ErrBadPage }
