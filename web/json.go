package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Empty is the input type of a JSON handler that reads no body.
type Empty struct{}

// A StatusCoder chooses the status of a JSON handler's success response;
// without it the status is 200.
type StatusCoder interface {
	StatusCode() int
}

// Created wraps a value to be sent with 201 Created by a JSON handler.
type Created[T any] struct{ Value T }

// StatusCode returns 201.
func (Created[T]) StatusCode() int { return http.StatusCreated }

// MarshalJSON encodes the wrapped value.
func (c Created[T]) MarshalJSON() ([]byte, error) { return json.Marshal(c.Value) }

// jsonDecoding is what the options of JSON and ReadJSON set.
type jsonDecoding struct {
	disallowUnknownFields bool
}

func jsonOptions(opts []JSONOption) jsonDecoding {
	var d jsonDecoding
	for _, o := range opts {
		if o != nil {
			o.applyJSON(&d)
		}
	}
	return d
}

// JSON adapts a typed function to a HandlerFunc: it decodes the request body
// into In (unless In is Empty), calls fn, and encodes its result as JSON
// with status 200 (or Out's StatusCode). Bad JSON is a 400 that says what
// was wrong; a body over the limit is a 413, one that did not arrive within
// the body timeout a 408; fn's error is rendered as any HandlerFunc error.
func JSON[In, Out any](fn func(r *http.Request, in In) (Out, error), opts ...JSONOption) HandlerFunc {
	decoding := jsonOptions(opts)
	return func(w http.ResponseWriter, r *http.Request) error {
		var in In
		if _, empty := any(&in).(*Empty); !empty {
			if err := readJSON(r, &in, decoding); err != nil {
				return err
			}
		}
		out, err := fn(r, in)
		if err != nil {
			return err
		}
		status := http.StatusOK
		if sc, ok := any(out).(StatusCoder); ok {
			status = sc.StatusCode()
		}
		return WriteJSON(w, status, out)
	}
}

// ReadJSON decodes the request body, which must hold exactly one JSON value,
// into v. Its errors are *Error values ready to return from a handler: 415
// for a non-JSON content type, 413 for a body over the limit, 408 for a body
// that did not arrive within the body timeout, 400 naming the problem (empty
// body, syntax error and offset, wrong type for a field, and with
// WithDisallowUnknownFields a field v has no place for).
func ReadJSON(r *http.Request, v any, opts ...JSONOption) error {
	var decoding jsonDecoding
	if len(opts) > 0 { // the options escape; keep the usual call free of them
		decoding = jsonOptions(opts)
	}
	return readJSON(r, v, decoding)
}

func readJSON(r *http.Request, v any, decoding jsonDecoding) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !hasJSONSuffix(mt)) {
			return &Error{Status: http.StatusUnsupportedMediaType,
				Message: fmt.Sprintf("content type %q is not application/json", ct)}
		}
	}
	if r.Body == nil {
		return badRequest("empty request body: want JSON")
	}
	dec := json.NewDecoder(r.Body)
	if decoding.disallowUnknownFields {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if e := bodyError(err); e != nil {
			return e
		}
		return badRequest("malformed JSON: unexpected data after the value")
	}
	return nil
}

func hasJSONSuffix(mt string) bool {
	return len(mt) > 5 && mt[len(mt)-5:] == "+json"
}

func jsonError(err error) error {
	if e := bodyError(err); e != nil {
		return e
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return badRequest("empty request body: want JSON")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: unexpected end of body")
	case errors.As(err, &syntax):
		return badRequest("malformed JSON at byte %d: %v", syntax.Offset, err)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return badRequest("JSON field %q: want %v, got %s", typ.Field, typ.Type, typ.Value)
		}
		return badRequest("JSON body: want %v, got %s", typ.Type, typ.Value)
	}
	// encoding/json has no error type for an unknown field, only this text.
	if quoted, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if name, uerr := strconv.Unquote(quoted); uerr == nil {
			return badRequest("unknown JSON field %q", name)
		}
	}
	return badRequest("malformed JSON: %v", err)
}

// WriteJSON writes v as JSON with the given status. Its error is the
// encoding error, if any, reported before anything is written; a failed write
// to a client that has gone is not an error the handler can act on.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode JSON response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
	return nil
}
