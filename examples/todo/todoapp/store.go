package todoapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxTextLength is the longest todo text, in characters, that Create and
// Update accept.
const MaxTextLength = 1000

var (
	// ErrNotFound is returned when no todo has the given id.
	ErrNotFound = errors.New("todo not found")
	// ErrEmptyText is returned by Create and Update for text that is empty
	// or only white space.
	ErrEmptyText = errors.New("text is empty")
	// ErrTextTooLong is returned by Create and Update for text longer than
	// MaxTextLength characters.
	ErrTextTooLong = fmt.Errorf("text is longer than %d characters", MaxTextLength)
)

// A Todo is one item of the list, as stored and as sent over JSON.
type Todo struct {
	ID        int64  `json:"id"`
	Text      string `json:"text"`
	Completed bool   `json:"completed"`
}

// Store keeps todos in SQLite or PostgreSQL. Every write runs in its own
// transaction. A Store is safe for concurrent use; calls block while they
// wait for a database connection, until their context ends.
type Store struct {
	backend string
	// read serves queries and write serves transactions. For PostgreSQL they
	// are the same pool; for SQLite, which allows one writer at a time, write
	// holds a single connection so that writers queue in Go, in
	// database/sql's pool, instead of polling SQLite's busy handler. (A FIFO
	// queue in front of it was tried: it lowered throughput in the bench's
	// cask-todo scenario and did not clearly shorten the tail.)
	read  *sql.DB
	write *sql.DB
}

// Backend returns "sqlite" or "postgres".
func (s *Store) Backend() string { return s.backend }

// Close closes the store's connection pools and waits for their goroutines.
// Calls after Close return an error.
func (s *Store) Close() error {
	err := s.read.Close()
	if s.write != s.read {
		err = errors.Join(err, s.write.Close())
	}
	return err
}

// Ping checks that the database answers, on each of the store's pools: a
// readiness check (web.WithReadyCheck).
func (s *Store) Ping(ctx context.Context) error {
	err := s.read.PingContext(ctx)
	if s.write != s.read {
		err = errors.Join(err, s.write.PingContext(ctx))
	}
	if err != nil {
		return fmt.Errorf("ping %s: %w", s.backend, err)
	}
	return nil
}

// List returns every todo in the given state, oldest first. For a list
// that may be long, ListPage reads it a page at a time.
func (s *Store) List(ctx context.Context, state State) ([]Todo, error) {
	where, err := stateCondition(state)
	if err != nil {
		return nil, fmt.Errorf("list todos: %w", err)
	}
	rows, err := s.read.QueryContext(ctx, "SELECT id, text, completed FROM todos WHERE "+where+" ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("list todos: %w", err)
	}
	todos, err := scanTodos(rows)
	if err != nil {
		return nil, fmt.Errorf("list todos: %w", err)
	}
	return todos, nil
}

// ListPage returns one page of the todos in the given state, oldest first:
// at most page.Limit of those whose ids are greater than page.After. more
// reports whether todos follow the page; the next page starts after the
// last id of this one. A page out of range is an error wrapping ErrBadPage.
func (s *Store) ListPage(ctx context.Context, state State, page Page) (todos []Todo, more bool, err error) {
	where, err := stateCondition(state)
	if err == nil {
		err = page.check()
	}
	if err != nil {
		return nil, false, fmt.Errorf("list todos: %w", err)
	}
	limit := page.Limit
	if limit == 0 {
		limit = DefaultPageLimit
	}
	// One row past the page tells whether another page follows, sparing
	// the client a request for an empty last page. The (completed, id)
	// index and the primary key both serve the range in id order, so a
	// page costs the same wherever it starts.
	rows, err := s.read.QueryContext(ctx,
		"SELECT id, text, completed FROM todos WHERE "+where+" AND id > $1 ORDER BY id LIMIT $2",
		page.After, int64(limit)+1)
	if err != nil {
		return nil, false, fmt.Errorf("list todos: %w", err)
	}
	todos, err = scanTodos(rows)
	if err != nil {
		return nil, false, fmt.Errorf("list todos: %w", err)
	}
	if len(todos) > limit {
		return todos[:limit], true, nil
	}
	return todos, false, nil
}

// stateCondition returns the WHERE condition that selects todos in state.
func stateCondition(state State) (string, error) {
	switch state {
	case StateActive:
		return "completed = FALSE", nil
	case StateCompleted:
		return "completed = TRUE", nil
	case StateAll, "":
		return "TRUE", nil
	}
	return "", badState(string(state))
}

// scanTodos reads and closes rows. It returns an empty slice, not nil, for
// no rows, so that an empty list is sent as [] rather than null.
func scanTodos(rows *sql.Rows) ([]Todo, error) {
	defer rows.Close()
	todos := []Todo{}
	for rows.Next() {
		var t Todo
		if err := rows.Scan(&t.ID, &t.Text, &t.Completed); err != nil {
			return nil, err
		}
		todos = append(todos, t)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return todos, nil
}

// Get returns the todo with the given id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id int64) (Todo, error) {
	var t Todo
	err := s.read.QueryRowContext(ctx,
		"SELECT id, text, completed FROM todos WHERE id = $1", id).
		Scan(&t.ID, &t.Text, &t.Completed)
	if errors.Is(err, sql.ErrNoRows) {
		return Todo{}, fmt.Errorf("get todo %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Todo{}, fmt.Errorf("get todo %d: %w", id, err)
	}
	return t, nil
}

// Create adds an active todo with the given text, trimmed of surrounding
// white space, and returns it with its new id.
func (s *Store) Create(ctx context.Context, text string) (Todo, error) {
	text, err := CleanText(text)
	if err != nil {
		return Todo{}, fmt.Errorf("create todo: %w", err)
	}
	var t Todo
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx,
			"INSERT INTO todos (text, completed) VALUES ($1, $2) RETURNING id, text, completed",
			text, false).Scan(&t.ID, &t.Text, &t.Completed)
	})
	if err != nil {
		return Todo{}, fmt.Errorf("create todo: %w", err)
	}
	return t, nil
}

// Update replaces the text of the todo with the given id and returns it.
func (s *Store) Update(ctx context.Context, id int64, text string) (Todo, error) {
	text, err := CleanText(text)
	if err != nil {
		return Todo{}, fmt.Errorf("update todo %d: %w", id, err)
	}
	t, err := s.writeOne(ctx,
		"UPDATE todos SET text = $1 WHERE id = $2 RETURNING id, text, completed", text, id)
	if err != nil {
		return Todo{}, fmt.Errorf("update todo %d: %w", id, err)
	}
	return t, nil
}

// Toggle flips the completed flag of the todo with the given id and returns
// it. Concurrent toggles of one todo are serialised by the database, so none
// is lost.
func (s *Store) Toggle(ctx context.Context, id int64) (Todo, error) {
	t, err := s.writeOne(ctx,
		"UPDATE todos SET completed = NOT completed WHERE id = $1 RETURNING id, text, completed", id)
	if err != nil {
		return Todo{}, fmt.Errorf("toggle todo %d: %w", id, err)
	}
	return t, nil
}

// Delete removes the todo with the given id.
func (s *Store) Delete(ctx context.Context, id int64) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM todos WHERE id = $1", id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete todo %d: %w", id, err)
	}
	return nil
}

// ClearCompleted removes every completed todo and returns how many it removed.
func (s *Store) ClearCompleted(ctx context.Context) (int64, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM todos WHERE completed = TRUE")
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("clear completed todos: %w", err)
	}
	return n, nil
}

// writeOne runs an UPDATE … RETURNING that touches at most one todo.
func (s *Store) writeOne(ctx context.Context, query string, args ...any) (Todo, error) {
	var t Todo
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, query, args...).Scan(&t.ID, &t.Text, &t.Completed)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		return err
	})
	return t, err
}

// inTx runs fn in a transaction on the write pool, committing when fn
// returns nil and rolling back otherwise.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		// The rollback error adds nothing: fn's error says what went wrong,
		// and a failed rollback releases the connection anyway.
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// CleanText trims white space from both ends of a todo's text and checks
// it: ErrEmptyText when nothing is left, ErrTextTooLong when more than
// MaxTextLength characters are.
func CleanText(text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", ErrEmptyText
	}
	if utf8.RuneCountInString(text) > MaxTextLength {
		return "", ErrTextTooLong
	}
	return text, nil
}
