package techempower

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestQueries(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 1}, {"foo", 1}, {"0", 1}, {"-3", 1}, {"1", 1}, {"20", 20},
		{"500", 500}, {"501", 500}, {"99999999999999999999", 1}, {" 5", 1},
	} {
		if got := Queries(tc.in); got != tc.want {
			t.Errorf("Queries(%q) = %d; want %d", tc.in, got, tc.want)
		}
	}
}

func TestBodies(t *testing.T) {
	b, err := JSONBody()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, got, want string }{
		{"json", string(b), `{"message":"Hello, World!"}`},
		{"world", string(AppendWorld(nil, World{ID: 7, RandomNumber: 4242})), `{"id":7,"randomNumber":4242}`},
		{"no worlds", string(AppendWorlds(nil)), `[]`},
		{"worlds", string(AppendWorlds([]World{{ID: 1, RandomNumber: 2}, {ID: 3, RandomNumber: 4}})), `[{"id":1,"randomNumber":2},{"id":3,"randomNumber":4}]`},
		{"fortunes", string(RenderFortunes([]Fortune{{ID: 0, Message: ExtraFortune}, {ID: 11, Message: `<b a="x">&'`}})),
			"<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>" +
				"<tr><td>0</td><td>" + ExtraFortune + "</td></tr>" +
				"<tr><td>11</td><td>&lt;b a=&#34;x&#34;&gt;&amp;&#39;</td></tr></table></body></html>"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %s; want %s", tc.name, tc.got, tc.want)
		}
	}
}

// testConn connects to PostgreSQL with temporary World (WorldRows rows)
// and Fortune tables, which hide any others and go with the connection
// when t ends; it skips t when PostgreSQL is unreachable.
func testConn(t *testing.T) *pgx.Conn {
	t.Helper()
	url := cmp.Or(os.Getenv("LOOM_BENCH_POSTGRES"), "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Skipf("PostgreSQL unreachable (set LOOM_BENCH_POSTGRES to a reachable database): %v", err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	for _, q := range []string{
		"CREATE TEMPORARY TABLE world (id integer PRIMARY KEY, randomnumber integer NOT NULL)",
		"INSERT INTO world SELECT g, g FROM generate_series(1, 10000) g",
		"CREATE TEMPORARY TABLE fortune (id integer PRIMARY KEY, message varchar(2048) NOT NULL)",
		"INSERT INTO fortune VALUES (1, 'fortune: No such file or directory'), (11, '<script>alert(\"x\");</script>')",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return conn
}

func TestDatabase(t *testing.T) {
	conn := testConn(t)
	ctx := context.Background()

	w, err := ReadWorld(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if w.ID < 1 || w.ID > WorldRows || w.RandomNumber != w.ID {
		t.Errorf("ReadWorld: got %+v; want a seeded row (id = randomnumber)", w)
	}

	worlds, err := ReadWorlds(ctx, conn, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(worlds) != 20 {
		t.Fatalf("ReadWorlds: got %d rows; want 20", len(worlds))
	}
	for _, w := range worlds {
		if w.RandomNumber != w.ID {
			t.Errorf("ReadWorlds: got %+v; want a seeded row", w)
		}
	}

	// 500 draws of 10,000 ids repeat some: each answer must be what the
	// database holds, the value written last for a repeated id.
	worlds, err = UpdateWorlds(ctx, conn, MaxQueries)
	if err != nil {
		t.Fatal(err)
	}
	if len(worlds) != MaxQueries {
		t.Fatalf("UpdateWorlds: got %d rows; want %d", len(worlds), MaxQueries)
	}
	for _, w := range worlds {
		var n int32
		if err := conn.QueryRow(ctx, "SELECT randomnumber FROM world WHERE id = $1", w.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != w.RandomNumber {
			t.Errorf("UpdateWorlds: World %d answered %d; the database holds %d", w.ID, w.RandomNumber, n)
		}
	}
	var ws []map[string]int
	if err := json.Unmarshal(AppendWorlds(worlds), &ws); err != nil || len(ws) != MaxQueries {
		t.Errorf("AppendWorlds: %d objects, %v; want %d", len(ws), err, MaxQueries)
	}

	page, err := FortunesPage(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	want := "<tr><td>11</td><td>&lt;script&gt;alert(&#34;x&#34;);&lt;/script&gt;</td></tr>" +
		"<tr><td>0</td><td>" + ExtraFortune + "</td></tr>" +
		"<tr><td>1</td><td>fortune: No such file or directory</td></tr></table>"
	if !strings.Contains(string(page), want) {
		t.Errorf("FortunesPage: got %s; want the rows sorted by message, escaped: %s", page, want)
	}
}
