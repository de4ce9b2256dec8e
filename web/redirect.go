package web

import "net/http"

// Redirect sends a redirect to url with status code (301, 302, 303, 307 or
// 308; 0 means 303 See Other, the answer to a POST). It returns nil so that a
// handler can end with return web.Redirect(w, r, "/", 0).
func Redirect(w http.ResponseWriter, r *http.Request, url string, code int) error {
	if code == 0 {
		code = http.StatusSeeOther
	}
	http.Redirect(w, r, url, code)
	return nil
}
