package load

import (
	"errors"
	"io"
)

// WriteText writes a wrk-like summary of r to w.
func (r *Result) WriteText(w io.Writer) error {
	return errors.New("load: not implemented")
}
