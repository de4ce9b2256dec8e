package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/loomrt/loom/internal/harness/techempower"
)

// teFake answers the TechEmpower paths without a database, as the rules
// want, unless break_ changes one thing: the verifier's fixtures.
type teFake struct {
	noDate, noServer, noLength bool
	contentType                string // replaces the right one
	body                       func(path string, r *http.Request) string
}

func (f teFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if !f.noServer {
		h.Set("Server", "fake")
	}
	if f.noDate {
		h["Date"] = nil // net/http adds none then
	}
	h.Set("Content-Type", or(f.contentType, map[string]string{
		"/json": "application/json", "/plaintext": "text/plain", "/db": "application/json", "/queries": "application/json",
		"/updates": "application/json", "/fortunes": "text/html; charset=utf-8",
	}[r.URL.Path]))
	body := f.body(r.URL.Path, r)
	if f.noLength {
		w.(http.Flusher).Flush() // the body goes chunked
		h.Del("Content-Length")
	}
	fmt.Fprint(w, body)
}

// goodBody is what a server that keeps the rules answers.
func goodBody(path string, r *http.Request) string {
	switch path {
	case "/json":
		return `{"message":"Hello, World!"}`
	case "/plaintext":
		return techempower.HelloWorld
	case "/db":
		return string(techempower.AppendWorld(nil, techempower.World{ID: 42, RandomNumber: 4242}))
	case "/queries", "/updates":
		worlds := make([]techempower.World, queriesParam(r))
		for i := range worlds {
			worlds[i] = techempower.World{ID: int32(i + 1), RandomNumber: int32(100 + i)}
		}
		return string(techempower.AppendWorlds(worlds))
	case "/fortunes":
		list := append(slices.Clone(fortunes), techempower.Fortune{ID: 0, Message: techempower.ExtraFortune})
		slices.SortFunc(list, func(a, b techempower.Fortune) int { return strings.Compare(a.Message, b.Message) })
		return string(techempower.RenderFortunes(list))
	}
	return ""
}

// with returns goodBody but for path, whose body is body(r).
func with(path string, body func(r *http.Request) string) func(string, *http.Request) string {
	return func(p string, r *http.Request) string {
		if p == path {
			return body(r)
		}
		return goodBody(p, r)
	}
}

func fixed(s string) func(*http.Request) string { return func(*http.Request) string { return s } }

func TestVerifyTechEmpower(t *testing.T) {
	fortunePage := func(list []techempower.Fortune) string { return string(techempower.RenderFortunes(list)) }
	sorted := append(slices.Clone(fortunes), techempower.Fortune{ID: 0, Message: techempower.ExtraFortune})
	slices.SortFunc(sorted, func(a, b techempower.Fortune) int { return strings.Compare(a.Message, b.Message) })
	for _, tc := range []struct {
		name    string
		test    string
		fake    teFake
		mention string // "" : passes
	}{
		{name: "json", test: "json", fake: teFake{body: goodBody}},
		{name: "plaintext", test: "plaintext", fake: teFake{body: goodBody}},
		{name: "db", test: "db", fake: teFake{body: goodBody}},
		{name: "queries", test: "queries", fake: teFake{body: goodBody}},
		{name: "fortunes", test: "fortunes", fake: teFake{body: goodBody}},
		{name: "chunked instead of Content-Length", test: "json", fake: teFake{body: goodBody, noLength: true}},

		{name: "missing Date", test: "json", fake: teFake{body: goodBody, noDate: true}, mention: "no Date"},
		{name: "missing Server", test: "db", fake: teFake{body: goodBody, noServer: true}, mention: "no Server"},
		{name: "wrong content type", test: "json", fake: teFake{body: goodBody, contentType: "text/plain"}, mention: "Content-Type"},
		{name: "fortunes without charset", test: "fortunes", fake: teFake{body: goodBody, contentType: "text/html"}, mention: "charset"},

		{name: "json with an extra key", test: "json", fake: teFake{body: with("/json", fixed(`{"message":"Hello, World!","x":1}`))}, mention: "want exactly"},
		{name: "json message wrong", test: "json", fake: teFake{body: with("/json", fixed(`{"message":"Hello World"}`))}, mention: "want exactly"},
		{name: "plaintext body wrong", test: "plaintext", fake: teFake{body: with("/plaintext", fixed("Hello, World"))}, mention: "body"},
		{name: "db as an array", test: "db", fake: teFake{body: with("/db", fixed(`[{"id":1,"randomNumber":2}]`))}, mention: "not a JSON object"},
		{name: "db without randomNumber", test: "db", fake: teFake{body: with("/db", fixed(`{"id":1}`))}, mention: "want exactly id and randomNumber"},
		{name: "db with another key", test: "db", fake: teFake{body: with("/db", fixed(`{"id":1,"number":2}`))}, mention: "key"},
		{name: "db id out of range", test: "db", fake: teFake{body: with("/db", fixed(`{"id":10001,"randomNumber":2}`))}, mention: "integer from 1"},
		{name: "db id a string", test: "db", fake: teFake{body: with("/db", fixed(`{"id":"1","randomNumber":2}`))}, mention: "integer from 1"},
		{name: "db id not an integer", test: "db", fake: teFake{body: with("/db", fixed(`{"id":1.5,"randomNumber":2}`))}, mention: "integer from 1"},
		{name: "db id 0", test: "db", fake: teFake{body: with("/db", fixed(`{"id":0,"randomNumber":2}`))}, mention: "integer from 1"},
		{name: "db randomNumber 10000", test: "db", fake: teFake{body: with("/db", fixed(`{"id":1,"randomNumber":10000}`))}},
		{name: "db id twice, in two cases", test: "db", fake: teFake{body: with("/db", fixed(`{"id":1,"ID":2}`))}, mention: "want exactly id and randomNumber"},
		{name: "db with three keys, one twice", test: "db", fake: teFake{body: with("/db", fixed(`{"id":1,"ID":1,"randomNumber":2}`))}, mention: "want exactly id and randomNumber"},
		{name: "db with lower-case keys", test: "db", fake: teFake{body: with("/db", fixed(`{"id":1,"randomnumber":2}`))}},

		{name: "queries not clamped to 500", test: "queries", fake: teFake{body: with("/queries", func(r *http.Request) string {
			var n int
			fmt.Sscan(r.URL.Query().Get("queries"), &n)
			if n <= 500 {
				return goodBody("/queries", r)
			}
			return string(techempower.AppendWorlds(make([]techempower.World, n)))
		})}, mention: "clamped"},
		{name: "queries=0 not raised to 1", test: "queries", fake: teFake{body: with("/queries", func(r *http.Request) string {
			if r.URL.Query().Get("queries") == "0" {
				return "[]"
			}
			return goodBody("/queries", r)
		})}, mention: "clamped"},
		{name: "non-numeric queries not 1", test: "queries", fake: teFake{body: with("/queries", func(r *http.Request) string {
			if r.URL.Query().Get("queries") == "foo" {
				return goodBody("/queries", httptest.NewRequest(http.MethodGet, "/queries?queries=20", nil))
			}
			return goodBody("/queries", r)
		})}, mention: "clamped"},
		{name: "queries as an object", test: "queries", fake: teFake{body: with("/queries", fixed(`{"id":1,"randomNumber":2}`))}, mention: "not a JSON array"},

		{name: "fortunes unescaped", test: "fortunes", fake: teFake{body: with("/fortunes", func(*http.Request) string {
			return strings.Replace(fortunePage(sorted), "&lt;script&gt;", "<script>", 1)
		})}, mention: "not HTML-escaped"},
		{name: "fortunes unsorted", test: "fortunes", fake: teFake{body: with("/fortunes", func(*http.Request) string {
			byID := slices.Clone(sorted)
			slices.SortFunc(byID, func(a, b techempower.Fortune) int { return int(a.ID - b.ID) })
			return fortunePage(byID)
		})}, mention: "sorted by message"},
		{name: "fortunes without the added row", test: "fortunes", fake: teFake{body: with("/fortunes", func(*http.Request) string {
			return fortunePage(slices.DeleteFunc(slices.Clone(sorted), func(f techempower.Fortune) bool { return f.ID == 0 }))
		})}, mention: "rows"},
		{name: "fortunes escaped twice", test: "fortunes", fake: teFake{body: with("/fortunes", func(*http.Request) string {
			return strings.Replace(fortunePage(sorted), "&lt;script&gt;", "&amp;lt;script&amp;gt;", 1)
		})}, mention: "row"},
		{name: "fortunes with a wrong id", test: "fortunes", fake: teFake{body: with("/fortunes", func(*http.Request) string {
			wrong := slices.Clone(sorted)
			wrong[slices.IndexFunc(wrong, func(f techempower.Fortune) bool { return f.ID == 0 })].ID = 13
			return fortunePage(wrong)
		})}, mention: "row"},
		{name: "fortunes not a page", test: "fortunes", fake: teFake{body: with("/fortunes", fixed("<table></table>"))}, mention: "titled Fortunes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.fake)
			defer srv.Close()
			_, err := verifyTechEmpower(context.Background(), tc.test, srv.URL, nil)
			switch {
			case tc.mention == "" && err != nil:
				t.Errorf("verify %s: %v; want it to pass", tc.test, err)
			case tc.mention != "" && (!errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), tc.mention)):
				t.Errorf("verify %s: %v; want ErrVerify mentioning %q", tc.test, err, tc.mention)
			}
		})
	}
}

// TestVerifyClaimsTheRowsItAsked: the verifier's own requests count in
// what the database must have seen.
func TestVerifyClaimsTheRowsItAsked(t *testing.T) {
	srv := httptest.NewServer(teFake{body: goodBody})
	defer srv.Close()
	want := 0
	for _, c := range queriesCases {
		want += c.rows
	}
	for _, tc := range []struct {
		test string
		want Work
	}{
		{"json", Work{}}, {"db", Work{WorldReads: 1}}, {"queries", Work{WorldReads: int64(want)}}, {"fortunes", Work{FortuneScans: 1}},
		{"updates", Work{WorldReads: int64(want), WorldUpdates: int64(want)}}, // without a database: its rows are not read back
	} {
		got, err := verifyTechEmpower(context.Background(), tc.test, srv.URL, nil)
		if err != nil || got != tc.want {
			t.Errorf("verify %s: %+v, %v; want %+v", tc.test, got, err, tc.want)
		}
	}
}

func TestQueriesParam(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"", 1}, {"?queries=", 1}, {"?queries=foo", 1}, {"?queries=0", 1}, {"?queries=-1", 1}, {"?queries=1", 1},
		{"?queries=20", 20}, {"?queries=500", 500}, {"?queries=501", 500}, {"?queries=99999999999999999999", 1}, {"?queries=2.5", 1},
	} {
		r := httptest.NewRequest(http.MethodGet, "/queries"+tc.query, nil)
		if got := queriesParam(r); got != tc.want {
			t.Errorf("queriesParam(%q) = %d; want %d", tc.query, got, tc.want)
		}
	}
}

// TestVerifyUpdatesReadsTheRowsBack: with a database, the updates test
// reads each answered row back; a server that answers numbers it did not
// write fails, one that wrote them passes.
func TestVerifyUpdatesReadsTheRowsBack(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	db, err := openDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.drop(ctx)
	lazy := httptest.NewServer(teFake{body: goodBody})
	defer lazy.Close()
	if _, err := verifyTechEmpower(ctx, "updates", lazy.URL, db); !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), "not written") {
		t.Errorf("verify updates of a server that writes nothing: %v; want ErrVerify, the update not written", err)
	}

	writer, err := pgx.Connect(ctx, db.url)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(ctx)
	var writeErr error
	honest := httptest.NewServer(teFake{body: with("/updates", func(r *http.Request) string {
		body := goodBody("/updates", r)
		for i := range queriesParam(r) {
			if _, err := writer.Exec(r.Context(), "UPDATE world SET randomnumber = $1 WHERE id = $2", 100+i, i+1); err != nil {
				writeErr = err
			}
		}
		return body
	})})
	defer honest.Close()
	if _, err := verifyTechEmpower(ctx, "updates", honest.URL, db); err != nil || writeErr != nil {
		t.Errorf("verify updates of a server that writes its rows: %v (its writes: %v); want it to pass", err, writeErr)
	}
}
