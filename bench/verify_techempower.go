package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomrt/loom/internal/harness/techempower"
)

// ErrVerify reports a server whose answers break a TechEmpower test's
// rules; it is not loaded.
var ErrVerify = errors.New("verification failed")

// verifyTechEmpower checks a server's answers to one TechEmpower test type
// as the suite's verifier does, before any load: status 200; the Server,
// Date, Content-Type and Content-Length (or chunked) headers; the exact
// JSON shapes, values in range and row counts, with the queries parameter
// parsed and clamped; the fortunes escaped, complete and sorted; updates
// written to the database. It returns the database work its requests
// claim. db is nil for the tests that do not query.
func verifyTechEmpower(ctx context.Context, test, base string, db *runDatabase) (Work, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	get := func(path string) ([]byte, error) { return fetchChecked(ctx, client, base+path, contentTypeOf(test)) }
	var claimed Work
	switch test {
	case "json":
		body, err := get("/json")
		if err != nil {
			return claimed, err
		}
		return claimed, checkMessage(body)
	case "plaintext":
		body, err := get("/plaintext")
		if err != nil {
			return claimed, err
		}
		if string(body) != techempower.HelloWorld {
			return claimed, fmt.Errorf("%w: /plaintext: body %q; want %q", ErrVerify, body, techempower.HelloWorld)
		}
		return claimed, nil
	case "db":
		body, err := get("/db")
		if err != nil {
			return claimed, err
		}
		claimed.WorldReads++
		_, err = checkWorld("/db", body)
		return claimed, err
	case "queries", "updates":
		for _, c := range queriesCases {
			path := "/" + test + c.query
			body, err := get(path)
			if err != nil {
				return claimed, err
			}
			claimed.WorldReads += int64(c.rows)
			if test == "updates" {
				claimed.WorldUpdates += int64(c.rows)
			}
			worlds, err := checkWorlds(path, body, c.rows)
			if err != nil {
				return claimed, err
			}
			if test == "updates" && db != nil {
				if err := checkUpdated(ctx, db, path, worlds); err != nil {
					return claimed, err
				}
			}
		}
		return claimed, nil
	case "fortunes":
		body, err := get("/fortunes")
		if err != nil {
			return claimed, err
		}
		claimed.FortuneScans++
		return claimed, checkFortunes(body)
	}
	return claimed, nil
}

// queriesCases are the queries parameters the verifier sends, with the
// rows each must return: the rules' parsing and clamping.
var queriesCases = []struct {
	query string
	rows  int
}{
	{"?queries=2", 2}, {"?queries=20", 20}, {"?queries=0", 1}, {"?queries=-5", 1}, {"?queries=foo", 1},
	{"?queries=", 1}, {"", 1}, {"?queries=501", 500},
}

// contentTypeOf is the media type a test answers with.
func contentTypeOf(test string) string {
	switch test {
	case "plaintext", "db-pool":
		return "text/plain"
	case "fortunes":
		return "text/html"
	}
	return "application/json"
}

// fetchChecked gets url and checks what every test requires of a response:
// status 200 and its headers.
func fetchChecked(ctx context.Context, client *http.Client, url, mediaType string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVerify, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: read body: %w", ErrVerify, url, err)
	}
	if err := checkHeaders(resp, mediaType); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrVerify, url, err)
	}
	return body, nil
}

// checkHeaders checks a response's status and the headers the rules
// require.
func checkHeaders(resp *http.Response, mediaType string) error {
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d; want 200", resp.StatusCode)
	}
	if resp.Header.Get("Server") == "" {
		return errors.New("no Server header")
	}
	date := resp.Header.Get("Date")
	if date == "" {
		return errors.New("no Date header")
	}
	if _, err := http.ParseTime(date); err != nil {
		return fmt.Errorf("header Date %q: %w", date, err)
	}
	if resp.Header.Get("Content-Length") == "" && !slices.Contains(resp.TransferEncoding, "chunked") {
		return errors.New("neither Content-Length nor Transfer-Encoding: chunked")
	}
	ct := resp.Header.Get("Content-Type")
	got, params, err := mime.ParseMediaType(ct)
	if err != nil || got != mediaType {
		return fmt.Errorf("header Content-Type %q; want %s", ct, mediaType)
	}
	if mediaType == "text/html" && !strings.EqualFold(params["charset"], "utf-8") {
		return fmt.Errorf("header Content-Type %q; want charset=utf-8", ct)
	}
	return nil
}

// checkMessage checks the json test's object: exactly {"message": "Hello, World!"}.
func checkMessage(body []byte) error {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("%w: /json: %s is not a JSON object: %w", ErrVerify, abbreviate(body), err)
	}
	if len(m) != 1 || m["message"] != techempower.HelloWorld {
		return fmt.Errorf("%w: /json: %s; want exactly {\"message\":%q}", ErrVerify, abbreviate(body), techempower.HelloWorld)
	}
	return nil
}

// checkWorld checks one World object: exactly the keys id and randomNumber
// (in any case, as the suite allows), each an integer from 1 to 10,000.
func checkWorld(path string, body []byte) (techempower.World, error) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return techempower.World{}, fmt.Errorf("%w: %s: %s is not a JSON object: %w", ErrVerify, path, abbreviate(body), err)
	}
	return worldOf(path, m)
}

func worldOf(path string, m map[string]any) (techempower.World, error) {
	var w techempower.World
	var seen int
	for k, v := range m {
		n, ok := v.(float64)
		if !ok || n != float64(int32(n)) || n < 1 || n > techempower.WorldRows {
			return w, fmt.Errorf("%w: %s: %s is %v; want an integer from 1 to %d", ErrVerify, path, k, v, techempower.WorldRows)
		}
		switch strings.ToLower(k) {
		case "id":
			w.ID = int32(n)
			seen |= 1
		case "randomnumber":
			w.RandomNumber = int32(n)
			seen |= 2
		default:
			return w, fmt.Errorf("%w: %s: key %q; want only id and randomNumber", ErrVerify, path, k)
		}
	}
	if seen != 3 || len(m) != 2 {
		return w, fmt.Errorf("%w: %s: object %v; want exactly id and randomNumber", ErrVerify, path, m)
	}
	return w, nil
}

// checkWorlds checks an array of rows World objects.
func checkWorlds(path string, body []byte, rows int) ([]techempower.World, error) {
	var list []map[string]any
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("%w: %s: %s is not a JSON array of objects: %w", ErrVerify, path, abbreviate(body), err)
	}
	if len(list) != rows {
		return nil, fmt.Errorf("%w: %s: %d rows; want %d (the queries parameter parsed and clamped to 1..%d)", ErrVerify, path, len(list), rows, techempower.MaxQueries)
	}
	worlds := make([]techempower.World, len(list))
	for i, m := range list {
		w, err := worldOf(path, m)
		if err != nil {
			return nil, err
		}
		worlds[i] = w
	}
	return worlds, nil
}

// checkUpdated checks that the rows an updates request returned hold, in
// the database, the numbers it answered with (rows drawn once; a row drawn
// twice may hold either value).
func checkUpdated(ctx context.Context, db *runDatabase, path string, worlds []techempower.World) error {
	times := map[int32]int{}
	for _, w := range worlds {
		times[w.ID]++
	}
	for _, w := range worlds {
		if times[w.ID] > 1 {
			continue
		}
		var n int32
		if err := db.conn.QueryRow(ctx, "SELECT randomnumber FROM "+db.schema+".world WHERE id = $1", w.ID).Scan(&n); err != nil {
			return fmt.Errorf("%w: %s: read World %d: %w", ErrDatabase, path, w.ID, err)
		}
		if n != w.RandomNumber {
			return fmt.Errorf("%w: %s: World %d answered %d, the database holds %d: the update was not written", ErrVerify, path, w.ID, w.RandomNumber, n)
		}
	}
	return nil
}

var (
	fortuneRow   = regexp.MustCompile(`(?s)<tr>\s*<td>\s*(\d+)\s*</td>\s*<td>(.*?)</td>\s*</tr>`)
	fortuneTitle = regexp.MustCompile(`(?is)^\s*<!doctype html>.*<title>\s*Fortunes\s*</title>`)
)

// checkFortunes checks the fortunes page: every row, the one added at
// request time included, sorted by message, each message HTML-escaped.
func checkFortunes(body []byte) error {
	if !fortuneTitle.Match(body) {
		return fmt.Errorf("%w: /fortunes: %s; want an HTML page titled Fortunes", ErrVerify, abbreviate(body))
	}
	want := append(slices.Clone(fortunes), techempower.Fortune{ID: 0, Message: techempower.ExtraFortune})
	slices.SortFunc(want, func(a, b techempower.Fortune) int { return strings.Compare(a.Message, b.Message) })
	rows := fortuneRow.FindAllSubmatch(body, -1)
	if len(rows) != len(want) {
		return fmt.Errorf("%w: /fortunes: %d rows; want %d", ErrVerify, len(rows), len(want))
	}
	for i, row := range rows {
		id, _ := strconv.Atoi(string(row[1]))
		cell := string(row[2])
		if strings.ContainsAny(cell, "<>") {
			return fmt.Errorf("%w: /fortunes: row %d: %q is not HTML-escaped", ErrVerify, i+1, cell)
		}
		if got := html.UnescapeString(cell); int32(id) != want[i].ID || got != want[i].Message {
			return fmt.Errorf("%w: /fortunes: row %d is %d %q; want %d %q (sorted by message)", ErrVerify, i+1, id, got, want[i].ID, want[i].Message)
		}
	}
	return nil
}

// abbreviate shortens a body for an error message.
func abbreviate(b []byte) string {
	const most = 120
	if len(b) > most {
		return strconv.Quote(string(b[:most])) + "…"
	}
	return strconv.Quote(string(b))
}
