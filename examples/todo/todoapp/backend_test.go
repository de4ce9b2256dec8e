package todoapp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A backend opens a fresh, empty store for one test and closes it (and
// removes its data) when the test ends.
type backend struct {
	name string
	open func(t testing.TB) *Store
}

var backends = []backend{
	{"sqlite", openTestSQLite},
	{"postgres", openTestPostgres},
}

// forEachBackend runs f as a parallel subtest per backend.
func forEachBackend(t *testing.T, f func(t *testing.T, open func(t testing.TB) *Store)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f(t, b.open)
		})
	}
}

func openTestSQLite(t testing.TB) *Store {
	t.Helper()
	store, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "todo.db"))
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return store
}

// postgresCandidates are tried in order when LOOM_TEST_DATABASE_URL is
// unset: the test database accepts postgres or root with trust auth.
var postgresCandidates = []string{
	"postgres://postgres@127.0.0.1:5432/test?sslmode=disable&connect_timeout=5",
	"postgres://root@127.0.0.1:5432/test?sslmode=disable&connect_timeout=5",
}

var postgresProbe struct {
	once sync.Once
	url  string
	err  error
}

// postgresURL returns the URL of a reachable test database. When there is
// none the test fails if CI is set, so that CI cannot pass without having
// run the PostgreSQL tests, and is skipped otherwise.
func postgresURL(t testing.TB) string {
	t.Helper()
	postgresProbe.once.Do(func() {
		candidates := postgresCandidates
		if u := os.Getenv("LOOM_TEST_DATABASE_URL"); u != "" {
			candidates = []string{u}
		}
		for _, u := range candidates {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			conn, err := pgx.Connect(ctx, u)
			if err == nil {
				err = conn.Close(ctx)
			}
			cancel()
			if err == nil {
				postgresProbe.url, postgresProbe.err = u, nil
				return
			}
			postgresProbe.err = err
		}
	})
	if postgresProbe.url == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL unreachable and CI is set: %v", postgresProbe.err)
		}
		t.Skipf("PostgreSQL unreachable (set LOOM_TEST_DATABASE_URL to a reachable database): %v", postgresProbe.err)
	}
	return postgresProbe.url
}

// openTestPostgres opens a store whose connections use a schema of their
// own, through search_path, so that tests running at once, in this process
// or another, never see each other's todos. The schema is dropped at the end.
func openTestPostgres(t testing.TB) *Store {
	t.Helper()
	store, err := OpenPostgres(t.Context(), testSchemaURL(t))
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	// Registered after the schema's cleanup, so it runs before it.
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return store
}

// testSchemaURL creates an empty schema, to be dropped when the test ends,
// and returns the test database's URL with search_path set to it.
func testSchemaURL(t testing.TB) string {
	t.Helper()
	base := postgresURL(t)
	schema := "todo_test_" + randomHex(t, 8)

	ctx := t.Context()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect admin: %v", err)
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		admin.Close(ctx)
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		// t.Context is done by now; cleanup gets its own bounded context.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := admin.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		if err := admin.Close(ctx); err != nil {
			t.Errorf("close admin: %v", err)
		}
	})

	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", base, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
