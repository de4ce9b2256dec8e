package web

import (
	"errors"
	"net/http"
	"time"
)

// Cookie returns the value of the cookie name, or a 400 *Error naming it
// when the request has none.
func Cookie(r *http.Request, name string) (string, error) {
	c, err := r.Cookie(name)
	if errors.Is(err, http.ErrNoCookie) {
		return "", badRequest("cookie %q is required", name)
	}
	if err != nil {
		return "", badRequest("cookie %q: %v", name, err)
	}
	return c.Value, nil
}

// SetCookie sets a cookie with safe defaults: HttpOnly always, Path "/"
// and SameSite=Lax unless c sets them, and Secure when c sets it or the
// request came over TLS (or says so in X-Forwarded-Proto). A zero MaxAge
// means a session cookie. For a cookie scripts must read, call
// http.SetCookie directly. An invalid cookie (bad name or value) is dropped
// by net/http, which logs it.
func SetCookie(w http.ResponseWriter, r *http.Request, c *http.Cookie) {
	cookie := *c
	if cookie.Path == "" {
		cookie.Path = "/"
	}
	if cookie.SameSite == 0 { // unset; SameSiteDefaultMode would mean "send the bare attribute"
		cookie.SameSite = http.SameSiteLaxMode
	}
	if !cookie.Secure && (r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https") {
		cookie.Secure = true
	}
	cookie.HttpOnly = true
	http.SetCookie(w, &cookie)
}

// DeleteCookie tells the client to drop the cookie name (at path "/" unless
// path is given).
func DeleteCookie(w http.ResponseWriter, name string, path ...string) {
	p := "/"
	if len(path) > 0 {
		p = path[0]
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: p, MaxAge: -1, Expires: time.Unix(0, 0)})
}
