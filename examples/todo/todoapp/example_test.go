package todoapp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/loomrt/loom/examples/todo/todoapp"
)

func ExampleNewApp() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "todo")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	store, err := todoapp.OpenSQLite(ctx, filepath.Join(dir, "todo.db"))
	if err != nil {
		panic(err)
	}
	defer store.Close()
	app, err := todoapp.NewApp(store)
	if err != nil {
		panic(err)
	}
	defer app.Shutdown(ctx)
	srv := httptest.NewServer(app)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/api/todos", "application/json", strings.NewReader(`{"text":"buy milk"}`))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.Status, " ", string(body))

	resp, err = http.Post(srv.URL+"/api/todos/1/toggle", "", nil)
	if err != nil {
		panic(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.Status, " ", string(body))
	// Output:
	// 201 Created {"id":1,"text":"buy milk","completed":false}
	// 200 OK {"id":1,"text":"buy milk","completed":true}
}

// ExampleStore_ListPage reads a list two todos at a time, each page
// starting after the last id of the page before.
func ExampleStore_ListPage() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "todo")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := todoapp.OpenSQLite(ctx, filepath.Join(dir, "todo.db"))
	if err != nil {
		panic(err)
	}
	defer store.Close()
	for _, text := range []string{"buy milk", "walk the dog", "read the docs", "write tests", "sleep"} {
		if _, err := store.Create(ctx, text); err != nil {
			panic(err)
		}
	}

	page := todoapp.Page{Limit: 2}
	for {
		todos, more, err := store.ListPage(ctx, todoapp.StateAll, page)
		if err != nil {
			panic(err)
		}
		fmt.Println(todos)
		if !more {
			break
		}
		page.After = todos[len(todos)-1].ID
	}
	// Output:
	// [{1 buy milk false} {2 walk the dog false}]
	// [{3 read the docs false} {4 write tests false}]
	// [{5 sleep false}]
}
