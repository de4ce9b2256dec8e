package todoapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"

	_ "modernc.org/sqlite" // registers the "sqlite" driver; pure Go, no cgo
)

// sqliteSchema creates the todos table. AUTOINCREMENT keeps ids of deleted
// todos from coming back, as PostgreSQL's identity column does. The index
// serves ?state=active and ?state=completed, in id order, without reading
// the todos of the other state.
const sqliteSchema = `CREATE TABLE IF NOT EXISTS todos (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	text      TEXT    NOT NULL,
	completed BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX IF NOT EXISTS todos_by_state ON todos (completed, id)`

// OpenSQLite opens, creating it if needed, the SQLite database file at path
// and makes sure the todos table exists.
//
// The file runs in WAL mode, so readers never wait for the writer. SQLite
// allows one writer at a time, so writes share a single connection and queue
// for it in Go; reads use a pool of up to max(4, 2×GOMAXPROCS) connections
// that are opened query-only. A busy timeout of 5 s covers the rare wait on
// a lock held by another process.
func OpenSQLite(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open sqlite: empty path")
	}
	// synchronous=NORMAL is the usual WAL setting: a commit survives a crash
	// of this process, and only a power loss can undo the latest commits.
	pragmas := url.Values{"_pragma": {
		"busy_timeout(5000)",
		"journal_mode(WAL)",
		"synchronous(NORMAL)",
	}}
	// BEGIN IMMEDIATE takes the write lock at the start of a transaction,
	// so a transaction never fails half-way when upgrading a read lock.
	writeDSN := sqliteDSN(path, pragmas, "_txlock", "immediate")
	write, err := sql.Open("sqlite", writeDSN)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)

	// Creating the table before the read pool opens means the file exists
	// and is in WAL mode when query-only connections arrive.
	if _, err := write.ExecContext(ctx, sqliteSchema); err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: create table: %w", path, err)
	}

	readPragmas := url.Values{"_pragma": slices.Concat(pragmas["_pragma"], []string{"query_only(1)"})}
	read, err := sql.Open("sqlite", sqliteDSN(path, readPragmas))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	readers := max(4, 2*runtime.GOMAXPROCS(0))
	read.SetMaxOpenConns(readers)
	// Keeping every reader idle rather than the default two avoids closing
	// and reopening connections under load.
	read.SetMaxIdleConns(readers)
	if err := read.PingContext(ctx); err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return &Store{backend: "sqlite", read: read, write: write}, nil
}

// sqliteDSN builds a modernc.org/sqlite data source name: a file: URI for
// path, escaped so that any file name works, with the driver's query
// parameters q plus extra key/value pairs.
func sqliteDSN(path string, q url.Values, extra ...string) string {
	q = maps.Clone(q)
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	if !filepath.IsAbs(path) {
		// A relative path must stay relative: "file:todo.db", not "file:///todo.db".
		u = url.URL{Scheme: "file", Opaque: (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath(), RawQuery: q.Encode()}
	}
	return u.String()
}
