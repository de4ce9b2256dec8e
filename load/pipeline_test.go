package load

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// pipelineServer answers requests only in batches: it reads batch requests
// (fewer for the run's last) before it writes a single response, so a
// client that waits for each response before sending the next never gets
// one. It writes the batch's responses, alternately framed by
// Content-Length and chunked, as write hands them to it. It records the
// size of each batch it read.
func pipelineServer(t *testing.T, batch, total int, write func(c net.Conn, b []byte)) (url string, batches func() []int) {
	t.Helper()
	var mu sync.Mutex
	var sizes []int
	served := 0
	url = tcpServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			mu.Lock()
			want := min(batch, total-served)
			mu.Unlock()
			if want <= 0 {
				return
			}
			for range want {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				req.Body.Close()
			}
			mu.Lock()
			sizes = append(sizes, want)
			first := served
			served += want
			mu.Unlock()
			var b strings.Builder
			for k := range want {
				body := fmt.Sprintf("ok-%d", first+k)
				if k%2 == 0 {
					fmt.Fprintf(&b, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				} else {
					fmt.Fprintf(&b, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
				}
			}
			write(c, []byte(b.String()))
		}
	})
	return url, func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), sizes...)
	}
}

// TestPipelineParsesBatchedAndSplitResponses: a batch of responses that
// arrives in one segment, one byte at a time, or cut at arbitrary points
// (inside a head, a chunk, between two responses) is read response by
// response, each counted once.
func TestPipelineParsesBatchedAndSplitResponses(t *testing.T) {
	pieces := func(n int) func(c net.Conn, b []byte) {
		return func(c net.Conn, b []byte) {
			for len(b) > 0 {
				k := min(n, len(b))
				if _, err := c.Write(b[:k]); err != nil {
					return
				}
				b = b[k:]
			}
		}
	}
	for _, tc := range []struct {
		name     string
		depth    int
		requests int64
		write    func(c net.Conn, b []byte)
	}{
		{"one write", 16, 48, pieces(1 << 20)},
		{"byte by byte", 4, 12, pieces(1)},
		{"pieces of 7 bytes", 16, 32, pieces(7)},
		{"last batch short", 16, 20, pieces(1 << 20)},
		{"depth 2", 2, 10, pieces(13)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, batches := pipelineServer(t, tc.depth, int(tc.requests), tc.write)
			res := mustRun(t, Config{Targets: []Target{{URL: url}}, Connections: 1, Requests: tc.requests,
				Pipeline: tc.depth, ExpectBody: []byte("ok-"), Timeout: 5 * time.Second})
			if res.Requests != tc.requests || res.Errors.Total() != 0 {
				t.Fatalf("served %d, errors %+v; want %d and none", res.Requests, res.Errors, tc.requests)
			}
			if res.Sent != tc.requests || res.Pipeline != tc.depth {
				t.Errorf("sent %d, pipeline %d; want %d and %d", res.Sent, res.Pipeline, tc.requests, tc.depth)
			}
			got := batches()
			for i, n := range got {
				want := tc.depth
				if i == len(got)-1 && int(tc.requests)%tc.depth != 0 {
					want = int(tc.requests) % tc.depth
				}
				if n != want {
					t.Errorf("batch %d held %d requests; want %d (batches %v)", i, n, want, got)
				}
			}
		})
	}
}

// TestPipelineOnNetHTTP: net/http answers pipelined requests one after the
// other; every one of them is served, over several connections.
func TestPipelineOnNetHTTP(t *testing.T) {
	srv, count := countingServer(t, hello)
	res := mustRun(t, Config{Targets: []Target{{URL: srv.URL}}, Connections: 4, Requests: 1000, Pipeline: 16, Timeout: 5 * time.Second,
		ExpectBody: []byte("Hello")})
	if res.Requests != 1000 || res.Errors.Total() != 0 {
		t.Errorf("served %d, errors %+v; want 1000 and none", res.Requests, res.Errors)
	}
	if count.Load() != 1000 {
		t.Errorf("server answered %d; want 1000", count.Load())
	}
	var text strings.Builder
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := "4 connections pipelining 16 requests each"; !strings.Contains(text.String(), want) {
		t.Errorf("text report:\n%s\nwant it to say %q", text.String(), want)
	}
}

// TestPipelineConnectionClose: a server that closes the connection after
// the second response of a batch of four leaves two requests unanswered;
// they are failures (closed before a response), not served, and the next
// batch goes on a new connection.
func TestPipelineConnectionClose(t *testing.T) {
	url := tcpServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for range 4 {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			req.Body.Close()
		}
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"))
	})
	res := mustRun(t, Config{Targets: []Target{{URL: url}}, Connections: 1, Requests: 8, Pipeline: 4, Timeout: 5 * time.Second})
	if res.Requests != 4 || res.Errors.Closed != 4 || res.Errors.Total() != 4 {
		t.Errorf("served %d, errors %+v; want 4 served and 4 closed", res.Requests, res.Errors)
	}
	if res.Connects != 2 {
		t.Errorf("connects %d; want 2", res.Connects)
	}
}

// TestPipelineStopBeforeTheRestFails: a run stopped after a response that
// ended its connection mid-batch was counted, but before the requests
// sent after it are counted as closed, counts none of them: they were cut
// off by the end of the run, not failed (pipeline.go, failRest's
// r.stopped.Load()).
func TestPipelineStopBeforeTheRestFails(t *testing.T) {
	url := tcpServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for range 4 {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			req.Body.Close()
		}
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"))
	})
	stops := 0
	testHookFailRest = func(r *runner) {
		stops++
		r.stop()
	}
	defer func() { testHookFailRest = nil }()
	res := mustRun(t, Config{Targets: []Target{{URL: url}}, Connections: 1, Requests: 8, Pipeline: 4, Timeout: 5 * time.Second})
	if stops != 1 {
		t.Fatalf("the run reached failRest %d times; want once, after the second response", stops)
	}
	if res.Requests != 2 || res.Errors.Total() != 0 {
		t.Errorf("served %d, errors %+v; want the 2 answered served and the 2 cut off not counted", res.Requests, res.Errors)
	}
}

// TestPipelineRetriesClosedKeepAlive: a server that answers one batch per
// connection and then closes it makes the next batch find its reused
// connection closed before any response: the batch (all GETs) goes again on
// a new connection, and nothing fails.
func TestPipelineRetriesClosedKeepAlive(t *testing.T) {
	var mu sync.Mutex
	answered := 0
	url := tcpServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for range 4 {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			req.Body.Close()
		}
		mu.Lock()
		answered += 4
		mu.Unlock()
		c.Write([]byte(strings.Repeat("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 4)))
	})
	res := mustRun(t, Config{Targets: []Target{{URL: url}}, Connections: 1, Requests: 16, Pipeline: 4, Timeout: 5 * time.Second})
	if res.Requests != 16 || res.Errors.Total() != 0 {
		t.Errorf("served %d, errors %+v; want 16 and none", res.Requests, res.Errors)
	}
	mu.Lock()
	defer mu.Unlock()
	if answered != 16 {
		t.Errorf("server answered %d; want 16", answered)
	}
}

// TestPipelineResendsOnlyAWholeReplayableBatch: the server answers some
// requests on each connection, then reads one more and closes. A batch
// goes again on a new connection only when its first response found a
// reused connection closed and every request in it is replayable; a batch
// holding a POST, a batch cut after its first response, and one on a new
// connection are counted as failed, never sent twice.
func TestPipelineResendsOnlyAWholeReplayableBatch(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		methods                  []string
		answered, pipeline       int
		requests                 int64
		seen, served, failed, co int64
	}{
		{"all GETs", []string{"GET"}, 2, 2, 4, 5, 4, 0, 2},
		{"a POST inside", []string{"GET", "POST", "GET"}, 3, 3, 6, 4, 3, 3, 1},
		{"cut after the first", []string{"GET"}, 3, 2, 4, 4, 3, 1, 1},
		{"a new connection", []string{"GET"}, 0, 2, 2, 1, 0, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, seen := dropServer(t, tc.answered)
			var targets []Target
			for _, m := range tc.methods {
				tg := Target{Method: m, URL: url}
				if m == "POST" {
					tg.Body = []byte("x")
				}
				targets = append(targets, tg)
			}
			res := mustRun(t, Config{Targets: targets, Connections: 1, Requests: tc.requests, Pipeline: tc.pipeline, Timeout: 5 * time.Second})
			if got := seen.Load(); got != tc.seen {
				t.Errorf("server read %d requests; want %d", got, tc.seen)
			}
			if res.Requests != tc.served || res.Errors.Total() != tc.failed {
				t.Errorf("served %d, errors %+v; want %d served, %d failed", res.Requests, res.Errors, tc.served, tc.failed)
			}
			if res.Connects != tc.co {
				t.Errorf("connects %d; want %d", res.Connects, tc.co)
			}
		})
	}
}

// TestPipelineConnectionCloseAfterAFailure: a response that fails its
// check (a wrong status, a body without ExpectBody) and closes the
// connection mid-batch counts as that failure once; the requests after it
// on the connection are counted as closed, not as more of it.
// (pipeline.go, the rest's f != failStatus and f != failBody.)
func TestPipelineConnectionCloseAfterAFailure(t *testing.T) {
	for _, tc := range []struct {
		name, second string
		want         func(Errors) int64
	}{
		{"status", "HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", func(e Errors) int64 { return e.Status }},
		{"body", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", func(e Errors) int64 { return e.Body }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tcpServer(t, func(c net.Conn) {
				br := bufio.NewReader(c)
				for range 4 {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					req.Body.Close()
				}
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + tc.second))
			})
			res := mustRun(t, Config{Targets: []Target{{URL: url}}, Connections: 1, Requests: 8, Pipeline: 4, Timeout: 5 * time.Second,
				ExpectBody: []byte("ok")})
			if res.Requests != 2 || tc.want(res.Errors) != 2 || res.Errors.Closed != 4 || res.Errors.Total() != 6 {
				t.Errorf("served %d, errors %+v; want 2 served, 2 %s failures and 4 closed", res.Requests, res.Errors, tc.name)
			}
		})
	}
}
