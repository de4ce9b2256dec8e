package todoapp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(t testing.TB) *Store) {
		store := open(t)
		ctx := t.Context()

		a, err := store.Create(ctx, "a")
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		b, err := store.Create(ctx, "b")
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		if a.ID >= b.ID {
			t.Errorf("got ids %d then %d; want increasing ids", a.ID, b.ID)
		}
		if _, err := store.Toggle(ctx, a.ID); err != nil {
			t.Fatalf("Toggle: %v", err)
		}
		if err := store.Delete(ctx, b.ID); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		// The id of a deleted todo is never given again.
		c, err := store.Create(ctx, "c")
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		if c.ID <= b.ID {
			t.Errorf("got id %d after deleting %d; want a new, larger id", c.ID, b.ID)
		}

		for _, tt := range []struct {
			state State
			want  string
		}{
			{"", "a c"},
			{StateAll, "a c"},
			{StateActive, "c"},
			{StateCompleted, "a"},
		} {
			todos, err := store.List(ctx, tt.state)
			if err != nil {
				t.Fatalf("List(%q): %v", tt.state, err)
			}
			var texts []string
			for _, todo := range todos {
				texts = append(texts, todo.Text)
			}
			if got := strings.Join(texts, " "); got != tt.want {
				t.Errorf("List(%q): got %q; want %q", tt.state, got, tt.want)
			}
		}
		if _, err := store.List(ctx, "done"); !errors.Is(err, ErrBadState) {
			t.Errorf("List(done): got %v; want ErrBadState", err)
		}

		for name, err := range map[string]error{
			"Get":    func() error { _, err := store.Get(ctx, b.ID); return err }(),
			"Toggle": func() error { _, err := store.Toggle(ctx, b.ID); return err }(),
			"Update": func() error { _, err := store.Update(ctx, b.ID, "x"); return err }(),
			"Delete": store.Delete(ctx, b.ID),
		} {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("%s of a deleted todo: got %v; want ErrNotFound", name, err)
			}
		}
		if _, err := store.Update(ctx, a.ID, " "); !errors.Is(err, ErrEmptyText) {
			t.Errorf("Update with blank text: got %v; want ErrEmptyText", err)
		}

		n, err := store.ClearCompleted(ctx)
		if err != nil || n != 1 {
			t.Errorf("ClearCompleted: got %d, %v; want 1, nil", n, err)
		}
		n, err = store.ClearCompleted(ctx)
		if err != nil || n != 0 {
			t.Errorf("second ClearCompleted: got %d, %v; want 0, nil", n, err)
		}
	})
}

func TestStoreClosed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(t testing.TB) *Store) {
		store := open(t)
		if err := store.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if _, err := store.Create(t.Context(), "x"); err == nil {
			t.Error("Create after Close: got nil error; want one")
		}
		if _, err := store.List(t.Context(), StateAll); err == nil {
			t.Error("List after Close: got nil error; want one")
		}
	})
}

// TestSQLiteFile checks the settings OpenSQLite promises, that todos
// outlive the store that wrote them, and that the file is the one named,
// even with characters that mean something in a URI.
func TestSQLiteFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "my todos #1? 100%.db")
	store, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	if _, err := store.Create(ctx, "persist me"); err != nil {
		t.Fatalf("Create: %v", err)
	}
	var mode string
	if err := store.read.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("got journal_mode %q; want wal", mode)
	}
	var timeout int
	if err := store.write.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout); err != nil {
		t.Fatal(err)
	}
	if timeout != 5000 {
		t.Errorf("got busy_timeout %d; want 5000", timeout)
	}
	// Reads go to query-only connections: a write there must fail.
	if _, err := store.read.ExecContext(ctx, "DELETE FROM todos"); err == nil {
		t.Error("DELETE on the read pool: got nil error; want query-only refusal")
	}
	if err := store.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file: %v", err)
	}

	store, err = OpenSQLite(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer store.Close()
	todos, err := store.List(ctx, StateAll)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(todos) != 1 || todos[0].Text != "persist me" {
		t.Errorf("after reopening got %+v; want the one todo written before", todos)
	}
}

// TestOpenPostgresConcurrently starts several stores on one new schema at
// once, as replicas of a server would: all must create or find the table.
func TestOpenPostgresConcurrently(t *testing.T) {
	url := testSchemaURL(t)
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			store, err := OpenPostgres(t.Context(), url)
			if err == nil {
				_, err = store.Create(t.Context(), "x")
				err = errors.Join(err, store.Close())
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("concurrent OpenPostgres: %v", err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name    string
		open    func() (*Store, error)
		wantErr string
	}{
		{"sqlite empty path", func() (*Store, error) { return OpenSQLite(ctx, "") }, "open sqlite: empty path"},
		{"sqlite missing directory", func() (*Store, error) {
			return OpenSQLite(ctx, filepath.Join(t.TempDir(), "no", "such", "dir", "todo.db"))
		}, "open sqlite"},
		{"postgres bad url", func() (*Store, error) { return OpenPostgres(ctx, "postgres://host:notaport/db") }, "open postgres"},
		{"postgres unreachable", func() (*Store, error) {
			// Port 1 on loopback refuses at once; nothing listens there.
			return OpenPostgres(ctx, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=5")
		}, "open postgres"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, err := tt.open()
			if err == nil {
				store.Close()
				t.Fatalf("got nil error; want one containing %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got error %q; want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr error
	}{
		{"buy milk", "buy milk", nil},
		{"  buy milk \n", "buy milk", nil},
		{"", "", ErrEmptyText},
		{" \t\r\n", "", ErrEmptyText},
		{strings.Repeat("ж", MaxTextLength), strings.Repeat("ж", MaxTextLength), nil},
		{strings.Repeat("ж", MaxTextLength+1), "", ErrTextTooLong},
		{" " + strings.Repeat("x", MaxTextLength) + " ", strings.Repeat("x", MaxTextLength), nil},
	}
	for _, tt := range tests {
		got, err := CleanText(tt.in)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("CleanText(%.20q…): got %.20q…, %v; want %.20q…, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseState(t *testing.T) {
	tests := []struct {
		in      string
		want    State
		wantErr bool
	}{
		{"", StateAll, false},
		{"all", StateAll, false},
		{"active", StateActive, false},
		{"completed", StateCompleted, false},
		{"Active", "", true},
		{"done", "", true},
		{" all", "", true},
	}
	for _, tt := range tests {
		got, err := ParseState(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseState(%q): got %q, %v; want %q, error %t", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && (!errors.Is(err, ErrBadState) || !strings.Contains(err.Error(), tt.in)) {
			t.Errorf("ParseState(%q): got error %q; want ErrBadState quoting the value", tt.in, err)
		}
	}
}
