package web

import (
	"fmt"
	"net/http"
	"time"
)

// SetCookie sets a cookie with safe defaults: HttpOnly always, Path "/"
// and SameSite=Lax unless c sets them, and Secure when c sets it or the
// request came over TLS (or says so in X-Forwarded-Proto). A zero MaxAge
// means a session cookie. For a cookie scripts must read, call
// http.SetCookie directly.
//
// An invalid cookie (a name that is not a token, a byte a cookie value or
// path cannot hold, a bad domain or expiry, Partitioned without Secure),
// which http.SetCookie would drop or alter with no more than a log line, is
// not sent: SetCookie writes nothing and returns an error naming the cookie
// and what is wrong with it, as (*http.Cookie).Valid reports it. Returned
// from a handler, it is a 500 (the server built a bad cookie) with the
// reason logged.
func SetCookie(w http.ResponseWriter, r *http.Request, c *http.Cookie) error {
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
	return writeCookie(w, &cookie)
}

// DeleteCookie tells the client to drop the cookie that c names: its Name,
// Path and Domain, with SetCookie's defaults (Path "/"); its value and
// expiry are ignored. Like SetCookie, it writes nothing and returns an error
// naming the cookie when the cookie is invalid.
func DeleteCookie(w http.ResponseWriter, r *http.Request, c *http.Cookie) error {
	return SetCookie(w, r, &http.Cookie{Name: c.Name, Path: c.Path, Domain: c.Domain,
		Secure: c.Secure, SameSite: c.SameSite, Partitioned: c.Partitioned,
		MaxAge: -1, Expires: time.Unix(0, 0)})
}

func writeCookie(w http.ResponseWriter, c *http.Cookie) error {
	if err := c.Valid(); err != nil {
		return fmt.Errorf("set cookie %q: %w", c.Name, err)
	}
	http.SetCookie(w, c)
	return nil
}
