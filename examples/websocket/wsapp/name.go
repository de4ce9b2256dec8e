package wsapp

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLength is the longest chat name, in characters.
const MaxNameLength = 32

// ErrBadName is returned by ParseName for a name that is too long or holds
// characters that are not printable.
var ErrBadName = errors.New("bad name")

// ParseName checks the ?name= of a chat connection and returns it trimmed
// of surrounding white space. The empty string is valid: the room then
// gives the member a guest name.
func ParseName(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: not valid UTF-8", ErrBadName)
	}
	if n := utf8.RuneCountInString(s); n > MaxNameLength {
		return "", fmt.Errorf("%w: %d characters, want at most %d", ErrBadName, n, MaxNameLength)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return "", fmt.Errorf("%w: character %U is not printable", ErrBadName, r)
		}
	}
	return s, nil
}
