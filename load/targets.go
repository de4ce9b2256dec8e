package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// ErrBadTargets reports a targets file that does not parse.
var ErrBadTargets = errors.New("bad targets file")

// ParseTargets reads a targets file, one request per line:
//
//	# a comment
//	GET  http://127.0.0.1:8080/todos
//	POST http://127.0.0.1:8080/todos {"title":"inline body"}
//	POST http://127.0.0.1:8080/todos @new-todo.json
//	    Content-Type: application/json
//
// A line is METHOD URL, separated by spaces or tabs, then optionally a body:
// the rest of the line as it stands, or @FILE naming a file whose contents
// are the body (relative paths are resolved against dir). Indented
// "Name: value" lines add headers to the request above them. Blank lines and
// lines starting with # are ignored.
func ParseTargets(r io.Reader, dir string) ([]Target, error) {
	var targets []Target
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), " \t\r")
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if len(trimmed) < len(line) { // indented: a header of the request above
			if len(targets) == 0 {
				return nil, fmt.Errorf("%w: line %d: header before any request", ErrBadTargets, n)
			}
			name, value, found := strings.Cut(trimmed, ":")
			name = strings.TrimSpace(name)
			if !found || !isToken([]byte(name)) {
				return nil, fmt.Errorf("%w: line %d: want an indented \"Name: value\" header", ErrBadTargets, n)
			}
			t := &targets[len(targets)-1]
			if t.Header == nil {
				t.Header = http.Header{}
			}
			t.Header.Add(name, strings.TrimSpace(value))
			continue
		}
		t, err := parseTargetLine(trimmed, dir)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrBadTargets, n, err)
		}
		targets = append(targets, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read targets: %w", err)
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%w: no requests", ErrBadTargets)
	}
	return targets, nil
}

func parseTargetLine(line, dir string) (Target, error) {
	method, rest := cutBlank(line)
	url, body := cutBlank(rest)
	if url == "" {
		return Target{}, errors.New("want METHOD URL [BODY | @FILE]")
	}
	if !isToken([]byte(method)) {
		return Target{}, fmt.Errorf("method %q", method)
	}
	t := Target{Method: method, URL: url}
	if strings.HasPrefix(body, "@") {
		path := body[1:]
		if path == "" {
			return Target{}, errors.New("@ names no file")
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return Target{}, fmt.Errorf("body: %w", err)
		}
		t.Body = b
	} else if body != "" {
		t.Body = []byte(body)
	}
	if _, err := buildRequest(t); err != nil {
		return Target{}, err
	}
	return t, nil
}

// cutBlank splits s at its first run of spaces or tabs, as a hand-aligned
// targets file may use either between its fields.
func cutBlank(s string) (before, after string) {
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}
