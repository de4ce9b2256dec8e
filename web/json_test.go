package web_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loomrt/loom/web"
)

type todo struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

func jsonApp(t *testing.T, opts ...web.AppOption) *web.App {
	app := newApp(t, opts...)
	app.Post("/todos", web.JSON(func(r *http.Request, in todo) (web.Created[todo], error) {
		if in.Text == "" {
			return web.Created[todo]{}, web.Errorf(http.StatusBadRequest, "text is empty")
		}
		return web.Created[todo]{Value: todo{ID: 1, Text: in.Text}}, nil
	}))
	app.Get("/todos/{id}", web.JSON(func(r *http.Request, _ web.Empty) (todo, error) {
		id, err := web.Param(r, "id").Int()
		if err != nil {
			return todo{}, err
		}
		if id != 1 {
			return todo{}, web.Errorf(http.StatusNotFound, "todo %d not found", id)
		}
		return todo{ID: 1, Text: "write tests"}, nil
	}))
	app.Get("/broken", web.JSON(func(r *http.Request, _ web.Empty) (todo, error) {
		return todo{}, errors.New("database password is hunter2")
	}))
	return app
}

func TestJSON(t *testing.T) {
	app := jsonApp(t, web.WithBodyLimit(64))
	tests := []struct {
		name, method, target, contentType, body string
		status                                  int
		want                                    string
	}{
		{"created", "POST", "/todos", "application/json", `{"text":"milk"}`, 201, `{"id":1,"text":"milk"}` + "\n"},
		{"no content type is fine", "POST", "/todos", "", `{"text":"milk"}`, 201, `{"id":1,"text":"milk"}` + "\n"},
		{"handler error", "POST", "/todos", "application/json", `{"text":""}`, 400, `{"error":"text is empty"}` + "\n"},
		{"malformed", "POST", "/todos", "application/json", `{"text":`, 400, `{"error":"malformed JSON: unexpected end of body"}` + "\n"},
		{"syntax", "POST", "/todos", "application/json", `{"text" "milk"}`, 400, `{"error":"malformed JSON at byte 9: invalid character '\"' after object key"}` + "\n"},
		{"wrong type", "POST", "/todos", "application/json", `{"text":42}`, 400, `{"error":"JSON field \"text\": want string, got number"}` + "\n"},
		{"empty", "POST", "/todos", "application/json", ``, 400, `{"error":"empty request body: want JSON"}` + "\n"},
		{"trailing", "POST", "/todos", "application/json", `{"text":"a"} {}`, 400, `{"error":"malformed JSON: unexpected data after the value"}` + "\n"},
		{"not json", "POST", "/todos", "text/plain", `{"text":"a"}`, 415, "content type \"text/plain\" is not application/json\n"},
		{"too large", "POST", "/todos", "application/json", `{"text":"` + strings.Repeat("x", 100) + `"}`, 413, `{"error":"request body larger than 64 bytes"}` + "\n"},
		{"get", "GET", "/todos/1", "", "", 200, `{"id":1,"text":"write tests"}` + "\n"},
		{"not found", "GET", "/todos/2", "", "", 404, "todo 2 not found\n"},
		{"bad id", "GET", "/todos/x", "", "", 400, `path parameter "id": "x" is not an integer` + "\n"},
		{"internal error hidden", "GET", "/broken", "", "", 500, "Internal Server Error\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body *strings.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req := httptest.NewRequest(tt.method, tt.target, nil)
			if body != nil {
				req = httptest.NewRequest(tt.method, tt.target, body)
			}
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			rec := httptest.NewRecorder()
			app.ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Body.String() != tt.want {
				t.Errorf("got %d %q; want %d %q", rec.Code, rec.Body.String(), tt.status, tt.want)
			}
		})
	}
}

func TestJSONOversizeChunkedBody(t *testing.T) {
	app := jsonApp(t, web.WithBodyLimit(64))
	srv := httptest.NewServer(app)
	defer srv.Close()
	// A body of unknown length is cut off by the reader, not the header check.
	pr := strings.NewReader(`{"text":"` + strings.Repeat("x", 1000) + `"}`)
	req, err := http.NewRequest("POST", srv.URL+"/todos", struct{ *strings.Reader }{pr})
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("got status %d; want 413", resp.StatusCode)
	}
}

func TestJSONDisallowUnknownFields(t *testing.T) {
	app := jsonApp(t)
	create := func(r *http.Request, in todo) (web.Created[todo], error) {
		return web.Created[todo]{Value: todo{ID: 1, Text: in.Text}}, nil
	}
	app.Post("/strict/todos", web.JSON(create, web.WithDisallowUnknownFields()))
	type list struct {
		Name  string `json:"name"`
		Todos []todo `json:"todos"`
	}
	app.Post("/lists", func(w http.ResponseWriter, r *http.Request) error {
		var in list
		if err := web.ReadJSON(r, &in, web.WithDisallowUnknownFields()); err != nil {
			return err
		}
		return web.WriteJSON(w, http.StatusOK, in)
	})
	app.Post("/lenient/lists", func(w http.ResponseWriter, r *http.Request) error {
		var in list
		if err := web.ReadJSON(r, &in); err != nil {
			return err
		}
		return web.WriteJSON(w, http.StatusOK, in)
	})
	tests := []struct {
		name, target, body string
		status             int
		want               string
	}{
		{"default ignores unknown fields", "/todos", `{"text":"milk","colour":"red"}`, 201, `{"id":1,"text":"milk"}` + "\n"},
		{"strict, known fields", "/strict/todos", `{"text":"milk","id":7}`, 201, `{"id":1,"text":"milk"}` + "\n"},
		{"strict, unknown field", "/strict/todos", `{"text":"milk","colour":"red"}`, 400, `{"error":"unknown JSON field \"colour\""}` + "\n"},
		{"strict, misspelt field", "/strict/todos", `{"txet":"milk"}`, 400, `{"error":"unknown JSON field \"txet\""}` + "\n"},
		{"strict, odd field name", "/strict/todos", `{"a\"b":1}`, 400, `{"error":"unknown JSON field \"a\\\"b\""}` + "\n"},
		{"strict matches case-insensitively, as encoding/json", "/strict/todos", `{"TEXT":"milk"}`, 201, `{"id":1,"text":"milk"}` + "\n"},
		{"strict, other errors unchanged", "/strict/todos", `{"text":42}`, 400, `{"error":"JSON field \"text\": want string, got number"}` + "\n"},
		{"ReadJSON strict, nested unknown field", "/lists", `{"name":"home","todos":[{"text":"milk","due":"today"}]}`, 400, `{"error":"unknown JSON field \"due\""}` + "\n"},
		{"ReadJSON strict, known fields", "/lists", `{"name":"home","todos":[{"text":"milk"}]}`, 200, `{"name":"home","todos":[{"id":0,"text":"milk"}]}` + "\n"},
		{"ReadJSON default, nested unknown field", "/lenient/lists", `{"name":"home","todos":[{"text":"milk","due":"today"}]}`, 200, `{"name":"home","todos":[{"id":0,"text":"milk"}]}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", tt.target, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			app.ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Body.String() != tt.want {
				t.Errorf("POST %s %s: got %d %q; want %d %q", tt.target, tt.body, rec.Code, rec.Body.String(), tt.status, tt.want)
			}
		})
	}
}

// TestReadJSONMediaTypes: application/json and any type with a "+json"
// suffix are JSON; "+json" alone, a suffix with nothing before it, is not.
func TestReadJSONMediaTypes(t *testing.T) {
	app := newApp(t)
	app.Post("/", func(w http.ResponseWriter, r *http.Request) error {
		var v map[string]int
		if err := web.ReadJSON(r, &v); err != nil {
			return err
		}
		return web.WriteJSON(w, http.StatusOK, v)
	})
	for _, tt := range []struct {
		contentType string
		status      int
	}{
		{"application/json", 200},
		{"application/json; charset=utf-8", 200},
		{"application/problem+json", 200},
		{"a/+json", 200},
		{"+json", 415},
		{"json", 415},
		{"text/plain", 415},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"a":1}`))
		req.Header.Set("Content-Type", tt.contentType)
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		if rec.Code != tt.status {
			t.Errorf("Content-Type %q: got %d %q; want %d", tt.contentType, rec.Code, rec.Body, tt.status)
		}
	}
}
