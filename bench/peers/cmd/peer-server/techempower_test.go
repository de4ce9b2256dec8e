package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/loomrt/loom/internal/harness/techempower"
)

// testDatabase makes a schema seeded as loom bench seeds a run's, points
// databaseEnv at it and drops it when t ends; it skips t when PostgreSQL is
// unreachable.
func testDatabase(t *testing.T) {
	t.Helper()
	base := os.Getenv("LOOM_BENCH_POSTGRES")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Skipf("PostgreSQL unreachable (set LOOM_BENCH_POSTGRES to a reachable database): %v", err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "loom_peers_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		conn.Close(ctx)
	})
	for _, s := range []string{
		"CREATE SCHEMA " + schema,
		"CREATE TABLE " + schema + ".world (id integer PRIMARY KEY, randomnumber integer NOT NULL)",
		"INSERT INTO " + schema + ".world SELECT i, 1 + i % 10000 FROM generate_series(1, 10000) AS i",
		"CREATE TABLE " + schema + ".fortune (id integer PRIMARY KEY, message varchar(2048) NOT NULL)",
		"INSERT INTO " + schema + ".fortune VALUES (1, 'fortune: No such file or directory'), (11, '<script>alert(\"x\");</script>')",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	t.Setenv(databaseEnv, u.String())
}

// TestRunServesTechEmpower: every web framework answers each TechEmpower
// test with status 200, the Server and Date headers, the test's content
// type and body; the database tests against a seeded schema.
func TestRunServesTechEmpower(t *testing.T) {
	testDatabase(t)
	for i, fw := range frameworkNames {
		if framework(i).actors() {
			continue
		}
		for _, tc := range []struct {
			workload, path, mediaType string
			check                     func(body string) bool
		}{
			{"json", "json", "application/json", func(b string) bool { return b == `{"message":"Hello, World!"}` }},
			{"plaintext", "plaintext", "text/plain", func(b string) bool { return b == techempower.HelloWorld }},
			{"db", "db", "application/json", func(b string) bool {
				var w struct{ ID, RandomNumber int }
				return json.Unmarshal([]byte(b), &w) == nil && w.ID >= 1 && w.ID <= 10000 && w.RandomNumber >= 1 && w.RandomNumber <= 10000
			}},
			{"queries", "queries?queries=3", "application/json", func(b string) bool {
				var ws []struct{ ID, RandomNumber int }
				return json.Unmarshal([]byte(b), &ws) == nil && len(ws) == 3
			}},
			{"queries", "queries?queries=foo", "application/json", func(b string) bool {
				var ws []struct{ ID int }
				return json.Unmarshal([]byte(b), &ws) == nil && len(ws) == 1
			}},
			{"updates", "updates?queries=501", "application/json", func(b string) bool {
				var ws []struct{ ID int }
				return json.Unmarshal([]byte(b), &ws) == nil && len(ws) == techempower.MaxQueries
			}},
			{"fortunes", "fortunes", "text/html", func(b string) bool {
				return strings.Contains(b, "<td>0</td><td>"+techempower.ExtraFortune+"</td>") && strings.Contains(b, "&lt;script&gt;") &&
					strings.Index(b, "&lt;script") < strings.Index(b, techempower.ExtraFortune) && strings.Index(b, techempower.ExtraFortune) < strings.Index(b, "fortune: No such")
			}},
		} {
			t.Run(fw+"/"+tc.path, func(t *testing.T) {
				s := start(t, "-framework", fw, "-workload", tc.workload, "-db-pool", "2")
				defer func() {
					if err := s.stop(); err != nil {
						t.Errorf("run after cancel = %v; want nil", err)
					}
				}()
				client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
				resp, err := client.Get(s.appURL + tc.path)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
				if resp.StatusCode != http.StatusOK || resp.Header.Get("Server") == "" || resp.Header.Get("Date") == "" || mt != tc.mediaType {
					t.Errorf("GET /%s: status %d, Server %q, Date %q, Content-Type %q; want 200, both headers and %s",
						tc.path, resp.StatusCode, resp.Header.Get("Server"), resp.Header.Get("Date"), resp.Header.Get("Content-Type"), tc.mediaType)
				}
				if !tc.check(string(body)) {
					t.Errorf("GET /%s: body %.200q breaks the test's rules", tc.path, body)
				}
			})
		}
	}
}
