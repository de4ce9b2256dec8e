package web

import (
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
)

// DefaultMultipartMemory is how much of a multipart form ParseForm keeps in
// memory; larger files spill to temporary files, removed when the handler
// returns.
const DefaultMultipartMemory = 8 << 20

// ParseForm parses an urlencoded or multipart body (and the query string)
// into r.Form, r.PostForm and r.MultipartForm. Its errors are *Error values:
// 413 beyond the body limit, 408 for a body that did not arrive within the
// body timeout, 400 for a malformed body. Calling it again is cheap. Form and
// FormFile call it for you.
func ParseForm(r *http.Request) error {
	if r.Form != nil && (r.MultipartForm != nil || !isMultipart(r)) {
		return nil
	}
	var err error
	if isMultipart(r) {
		err = r.ParseMultipartForm(DefaultMultipartMemory)
	} else {
		err = r.ParseForm()
	}
	if err == nil {
		return nil
	}
	if e := bodyError(err); e != nil {
		return e
	}
	if e := expiredBody(r); e != nil {
		return e
	}
	return badRequest("malformed form: %v", err)
}

func isMultipart(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return len(ct) >= 19 && ct[:19] == "multipart/form-data"
}

// FormFile returns the uploaded file of the multipart field name. The file
// must be closed by the caller. A missing file is a 400 *Error naming the field.
func FormFile(r *http.Request, name string) (multipart.File, *multipart.FileHeader, error) {
	if err := ParseForm(r); err != nil {
		return nil, nil, err
	}
	f, h, err := r.FormFile(name)
	if err != nil {
		if errors.Is(err, http.ErrMissingFile) || errors.Is(err, http.ErrNotMultipart) {
			return nil, nil, badRequest("form file %q is required", name)
		}
		return nil, nil, fmt.Errorf("form file %q: %w", name, err)
	}
	return f, h, nil
}
