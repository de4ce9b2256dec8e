package load

import (
	"errors"
	"io"
)

// ParseTargets reads a targets file: one request per line, "METHOD URL",
// optionally followed by an inline body or "@file" naming a body file
// relative to dir; indented "Name: value" lines below a request add headers
// to it; blank lines and lines starting with # are ignored.
func ParseTargets(r io.Reader, dir string) ([]Target, error) {
	return nil, errors.New("load: not implemented")
}
