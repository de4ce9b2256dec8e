package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

// Static serves the files of fsys below prefix (e.g. "/static/") for GET and
// HEAD. fsys is typically an embed.FS (fs.Sub it to drop the directory
// name) or, for a directory on disk, the FS of an os.Root, which refuses
// symlinks that lead out of the directory:
//
//	root, err := os.OpenRoot("public")
//	...
//	defer root.Close()
//	app.Static("/static/", root.FS())
//
// Responses have content types, ETag, Last-Modified (when the FS knows
// modification times) and Range support through http.ServeContent. A
// directory serves its index.html, never a listing. A path that is not a
// valid fs.FS name — "..", an absolute path, a backslash, a NUL byte, an
// encoded "%2e%2e" or "%2f" — is refused with 404, as is any name fsys
// refuses. So is a name with an element that begins with "." (.env,
// .git/config) unless WithDotfiles is given: a directory on disk often
// holds such files by accident. Static panics when prefix does not end
// with "/".
func (g *Group) Static(prefix string, fsys fs.FS, opts ...RouteOption) {
	if !strings.HasSuffix(prefix, "/") {
		panic(fmt.Sprintf("web: static prefix %q must end with /", prefix))
	}
	s := g.derive(opts)
	fsrv := &fileServer{fsys: fsys, dotfiles: s.dotfiles}
	g.handle(http.MethodGet, prefix+"{path...}", fsrv.handler("path"), s)
}

// Files returns a handler that serves the file of fsys named by the path
// parameter param (a "{param...}" wildcard), with the rules of Static.
func Files(fsys fs.FS, param string, opts ...FilesOption) HandlerFunc {
	var s routeSettings
	for _, o := range opts {
		if o != nil {
			o.applyFiles(&s)
		}
	}
	fsrv := &fileServer{fsys: fsys, dotfiles: s.dotfiles}
	return fsrv.handler(param)
}

type fileServer struct {
	fsys     fs.FS
	dotfiles bool     // serve names with an element that begins with "."
	etags    sync.Map // name → ETag, for files without a modification time
}

func (s *fileServer) handler(param string) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return s.serve(w, r, r.PathValue(param))
	}
}

var errNotFound = &Error{Status: http.StatusNotFound}

func (s *fileServer) serve(w http.ResponseWriter, r *http.Request, name string) error {
	if name == "" {
		name = "."
	}
	name = strings.TrimSuffix(name, "/")
	// fs.ValidPath refuses "..", empty and absolute elements; backslashes
	// are refused too, since some file systems read them as separators, and
	// NUL bytes, which no file name holds and which os.Root reports as an
	// error of its own (EINVAL), not as a missing file.
	if !fs.ValidPath(name) || strings.ContainsAny(name, "\\\x00") {
		return errNotFound
	}
	if !s.dotfiles && hasDotElement(name) {
		return errNotFound
	}
	f, info, err := s.open(name)
	if err != nil {
		return err
	}
	if info.IsDir() {
		f.Close()
		name = path.Join(name, "index.html")
		if f, info, err = s.open(name); err != nil {
			return err
		}
		if info.IsDir() {
			f.Close()
			return errNotFound
		}
	}
	defer f.Close()
	content, ok := f.(io.ReadSeeker)
	if !ok {
		b, err := io.ReadAll(f)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		content = bytes.NewReader(b)
	}
	etag, err := s.etag(name, info, content)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag)
	http.ServeContent(w, r, info.Name(), info.ModTime(), content)
	return nil
}

// hasDotElement reports whether a valid fs.FS name has an element that
// begins with "." ("." alone, the root, is not one).
func hasDotElement(name string) bool {
	if name == "." {
		return false
	}
	for elem := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(elem, ".") {
			return true
		}
	}
	return false
}

func (s *fileServer) open(name string) (fs.File, fs.FileInfo, error) {
	f, err := s.fsys.Open(name)
	if err != nil {
		return nil, nil, fileError(err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fileError(err)
	}
	return f, info, nil
}

// etag names a version of a file: size and modification time when the FS
// has them, else (embed.FS) a hash of the content, computed once.
func (s *fileServer) etag(name string, info fs.FileInfo, content io.ReadSeeker) (string, error) {
	if !info.ModTime().IsZero() {
		return `"` + strconv.FormatInt(info.Size(), 16) + "-" + strconv.FormatInt(info.ModTime().UnixNano(), 16) + `"`, nil
	}
	if tag, ok := s.etags.Load(name); ok {
		return tag.(string), nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, content); err != nil {
		return "", fmt.Errorf("hash %s: %w", name, err)
	}
	if _, err := content.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind %s: %w", name, err)
	}
	tag := `"` + hex.EncodeToString(h.Sum(nil)[:12]) + `"`
	s.etags.Store(name, tag)
	return tag, nil
}

func fileError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrInvalid):
		return errNotFound
	case errors.Is(err, fs.ErrPermission):
		return &Error{Status: http.StatusForbidden}
	default:
		// os.Root refuses escaping symlinks with an unexported error.
		if strings.Contains(err.Error(), "path escapes from parent") {
			return errNotFound
		}
		return err
	}
}
