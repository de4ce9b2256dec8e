package web_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/web"
)

// net/http drops an invalid cookie, or silently rewrites its value, with
// only a log line; SetCookie refuses it and says why.
func TestSetCookieRefusesInvalidCookies(t *testing.T) {
	tests := []struct {
		name   string
		cookie http.Cookie
		tls    bool
		want   string // in the error; "" for a valid cookie
	}{
		{"valid", http.Cookie{Name: "session", Value: "abc123"}, false, ""},
		{"space in value is quoted, not invalid", http.Cookie{Name: "greeting", Value: "hello world"}, false, ""},
		{"empty name", http.Cookie{Value: "x"}, false, `set cookie "": http: invalid Cookie.Name`},
		{"space in name", http.Cookie{Name: "my session", Value: "x"}, false, `set cookie "my session": http: invalid Cookie.Name`},
		{"semicolon in value", http.Cookie{Name: "session", Value: "a;b"}, false, `set cookie "session": http: invalid byte ';' in Cookie.Value`},
		{"quote in value", http.Cookie{Name: "session", Value: `say "hi"`}, false, `set cookie "session": http: invalid byte '"' in Cookie.Value`},
		// net/http quotes the byte 0xc3 as the rune it would be on its own.
		{"non-ASCII value", http.Cookie{Name: "name", Value: "José"}, false, `set cookie "name": http: invalid byte 'Ã' in Cookie.Value`},
		{"semicolon in path", http.Cookie{Name: "session", Value: "x", Path: "/a;b"}, false, `set cookie "session": http: invalid byte ';' in Cookie.Path`},
		{"bad domain", http.Cookie{Name: "session", Value: "x", Domain: "exa mple.com"}, false, `set cookie "session": http: invalid Cookie.Domain`},
		{"expiry before 1601", http.Cookie{Name: "session", Value: "x", Expires: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)}, false, `set cookie "session": http: invalid Cookie.Expires`},
		// SetCookie adds Secure only over TLS, and a partitioned cookie needs it.
		{"partitioned over http", http.Cookie{Name: "embed", Value: "x", Partitioned: true}, false, `set cookie "embed": http: partitioned cookies must be set with Secure`},
		{"partitioned over https", http.Cookie{Name: "embed", Value: "x", Partitioned: true}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := newApp(t)
			var got error
			app.Get("/", func(w http.ResponseWriter, r *http.Request) error {
				got = web.SetCookie(w, r, &tt.cookie)
				return got
			})
			req := httptest.NewRequest("GET", "/", nil)
			if tt.tls {
				req.TLS = &tls.ConnectionState{}
			}
			rec := httptest.NewRecorder()
			app.ServeHTTP(rec, req)
			sent := rec.Header().Values("Set-Cookie")
			if tt.want == "" {
				if got != nil || rec.Code != 200 || len(sent) != 1 {
					t.Errorf("SetCookie(%s): got error %v, status %d, Set-Cookie %q; want nil, 200 and one cookie", tt.cookie.Name, got, rec.Code, sent)
				}
				return
			}
			if got == nil || got.Error() != tt.want {
				t.Errorf("SetCookie: got error %v; want %s", got, tt.want)
			}
			if len(sent) != 0 {
				t.Errorf("SetCookie with an invalid cookie wrote Set-Cookie %q; want nothing", sent)
			}
			// The handler returned the error: the server's fault, a 500 whose
			// body does not echo the cookie.
			if rec.Code != http.StatusInternalServerError || strings.Contains(rec.Body.String(), "cookie") {
				t.Errorf("handler returning the error: got %d %q; want 500 without details", rec.Code, rec.Body.String())
			}
		})
	}
}

func TestDeleteCookieRefusesAnInvalidName(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/logout", nil)
	err := web.DeleteCookie(rec, req, &http.Cookie{Name: "bad name"})
	if err == nil || err.Error() != `set cookie "bad name": http: invalid Cookie.Name` {
		t.Errorf("DeleteCookie(%q): got %v; want an error naming the cookie", "bad name", err)
	}
	if err := web.DeleteCookie(rec, req, &http.Cookie{Name: "session", Path: "/a;b"}); err == nil || !strings.Contains(err.Error(), "Cookie.Path") {
		t.Errorf("DeleteCookie with path %q: got %v; want an error about the path", "/a;b", err)
	}
	if sent := rec.Header().Values("Set-Cookie"); len(sent) != 0 {
		t.Errorf("DeleteCookie wrote Set-Cookie %q for invalid cookies; want nothing", sent)
	}
}
