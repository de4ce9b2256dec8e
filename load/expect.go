package load

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadStatus reports an expected-status list that does not parse.
var ErrBadStatus = errors.New("bad expected status")

// ParseStatus parses an expected-status list into a Config.ExpectStatus
// function. The list is comma-separated; each item is a code ("200"), a
// class ("2xx") or an inclusive range ("200-299"). Codes are 100 to 599.
func ParseStatus(s string) (func(code int) bool, error) {
	var allowed [600]bool
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: empty", ErrBadStatus)
	}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		lo, hi, err := parseStatusItem(item)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrBadStatus, item, err)
		}
		for c := lo; c <= hi; c++ {
			allowed[c] = true
		}
	}
	return func(code int) bool {
		return code >= 0 && code < len(allowed) && allowed[code]
	}, nil
}

func parseStatusItem(item string) (lo, hi int, err error) {
	if len(item) == 3 && (item[1] == 'x' || item[1] == 'X') && (item[2] == 'x' || item[2] == 'X') {
		if item[0] < '1' || item[0] > '5' {
			return 0, 0, errors.New("class must be 1xx to 5xx")
		}
		lo = int(item[0]-'0') * 100
		return lo, lo + 99, nil
	}
	a, b, isRange := strings.Cut(item, "-")
	if lo, err = parseCode(a); err != nil {
		return 0, 0, err
	}
	if !isRange {
		return lo, lo, nil
	}
	if hi, err = parseCode(b); err != nil {
		return 0, 0, err
	}
	if hi < lo {
		return 0, 0, errors.New("range ends before it starts")
	}
	return lo, hi, nil
}

func parseCode(s string) (int, error) {
	s = strings.TrimSpace(s)
	if len(s) != 3 {
		return 0, errors.New("a code has three digits")
	}
	c, err := strconv.Atoi(s)
	if err != nil || c < 100 || c > 599 {
		return 0, errors.New("a code is 100 to 599")
	}
	return c, nil
}
