package bench

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/loomrt/loom/examples/todo/todoapp"
	"github.com/loomrt/loom/internal/harness/cmdtest"
	"github.com/loomrt/loom/web"
)

// TestServeTodoSeeds: the cask-todo server starts with todoSeed todos, the
// second half of them completed, as todoTargets expects (workload_todo.go,
// the seeding's i > todoSeed/2).
func TestServeTodoSeeds(t *testing.T) {
	app, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	stop, err := serveTodo(t.Context(), app, Plan{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	url := cmdtest.Serve(t, app)
	count := func(state string) (n, done int) {
		resp, err := http.Get(url + "/api/todos?limit=100&state=" + state)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var todos []todoapp.Todo
		if err := json.NewDecoder(resp.Body).Decode(&todos); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /api/todos?state=%s: %d, %v", state, resp.StatusCode, err)
		}
		for _, td := range todos {
			if td.Completed {
				done++
			}
		}
		return len(todos), done
	}
	if n, done := count("all"); n != todoSeed || done != todoSeed/2 {
		t.Errorf("seeded %d todos, %d completed; want %d, %d", n, done, todoSeed, todoSeed/2)
	}
	if n, done := count("completed"); n != todoSeed/2 || done != n {
		t.Errorf("%d completed todos listed (%d completed); want %d", n, done, todoSeed/2)
	}
}
