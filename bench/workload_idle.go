package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/loomrt/loom/internal/harness/procstat"
	"github.com/loomrt/loom/internal/harness/runtimestats"
	"github.com/loomrt/loom/load"
)

// idleConnsAsked is the full plan's idle connections: SCENARIOS.md asks for
// 10,000, and 50,000 where file descriptors allow. A machine that allows
// fewer gets as many as it allows, and the report says what limited them.
const idleConnsAsked = 50000

func idleConns() *Scenario {
	return &Scenario{
		Name: "idle-conns",
		Workload: "keep-alive connections each send GET / once and stay open, idle, while 100 connections send GET / " +
			"(\"Hello World!\"): what an idle connection costs the server, and whether the active ones feel it",
		Seed: "Spring talk: Tomcat (a thread per connection) beside Jetty and Undertow (an event loop handing requests to " +
			"workers): the connection model matters as much as the thread model. net/http measured here: about 19 KB per idle connection",
		Changes: fmt.Sprintf("%s idle connections asked, fewer where the file descriptor limit or the local port range "+
			"do not allow them (the report says which; each side holds one end in its own process); RSS per idle "+
			"connection is the server's RSS with them open less before, ÷ connections. The active load is hello's, "+
			"100 connections for 4 s after a 1 s warm-up. --quick: 1,000 idle, 0.5 s after 0.1 s.", count(idleConnsAsked)),
		Full: Plan{
			Models: []string{"virtual", "nbio/virtual"}, Connections: 100, Idle: idleConnsAsked,
			Warmup: time.Second, Duration: 4 * time.Second, Timeout: 30 * time.Second,
		},
		Quick: Plan{
			Models: []string{"virtual", "nbio/virtual"}, Connections: 100, Idle: 1000,
			Warmup: 100 * time.Millisecond, Duration: 500 * time.Millisecond, Timeout: 10 * time.Second,
		},
		Limit: func(Plan) Limit {
			return Limit{Formula: "CPU-bound: no closed form; the figure to read is the memory per idle connection"}
		},
		Targets:    get("/"),
		ExpectBody: helloBody,
		Serve:      serveHello,
	}
}

// idleCount is how many of asked idle connections to open beside active
// ones under a limit on connections (0: none known): what the limit leaves.
func idleCount(asked, active, limit int) int {
	if limit > 0 && limit-active < asked {
		return max(limit-active, 0)
	}
	return asked
}

// holdIdle opens the plan's idle connections to the server (as many as
// this process and the server may hold beside the active ones) and says
// what they cost it. The caller closes the connections after the run;
// a failure to open them all is a note in the stats, and the run goes on
// with those that opened.
func holdIdle(ctx context.Context, srv *child, target load.Target, p Plan) (*IdleStats, *load.Held) {
	st := &IdleStats{Asked: p.Idle}
	// The server's limit is this process's: it inherits RLIMIT_NOFILE, and
	// both hold one end of every connection.
	limit, why := load.ConnectionLimit()
	n := idleCount(p.Idle, p.Connections, limit)
	if n < p.Idle {
		st.Limited = why
	}
	before := readServer(ctx, srv)
	held, err := load.Hold(ctx, target, n, p.Timeout)
	if held == nil {
		held = &load.Held{}
	}
	if err != nil {
		st.Limited = err.Error()
	}
	st.Held = held.Len()
	// The server has written every response; give its goroutines a moment
	// to park on their next read before counting them.
	time.Sleep(200 * time.Millisecond)
	after := readServer(ctx, srv)
	st.RSSBefore, st.RSSWithIdle = before.RSSBytes, after.RSSBytes
	st.ThreadsBefore, st.ThreadsWithIdle = before.Threads, after.Threads
	st.GoroutinesBefore, st.GoroutinesWithIdle = before.Goroutines, after.Goroutines
	st.RSSPerConn = rssPerConn(st.Held, before.RSSBytes, after.RSSBytes)
	return st, held
}

// rssPerConn is what each of held idle connections added to the server's
// RSS, from before they opened to after; 0 when none was held or the RSS
// after could not be read.
func rssPerConn(held int, before, after uint64) float64 {
	if held > 0 && after > 0 {
		return (float64(after) - float64(before)) / float64(held)
	}
	return 0
}

// readServer reads one sample of the server: RSS and threads from /proc,
// goroutines from its metrics listener; zero where either cannot be read.
func readServer(ctx context.Context, srv *child) Sample {
	var s Sample
	if st, err := procstat.Read(srv.cmd.Process.Pid); err == nil {
		s.RSSBytes, s.Threads = st.RSSBytes, st.Threads
	}
	if srv.metricsAddr != "" {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if snap, err := runtimestats.Fetch(ctx, "http://"+srv.metricsAddr+"/"); err == nil {
			s.Goroutines = snap.Goroutines
		}
	}
	return s
}

// idleTable is the idle connections' own table, or nil when no run held
// any: per model, how many were held and what they cost.
func idleTable(runs []ModelRun) [][]string {
	var rows [][]string
	for _, r := range runs {
		if r.Idle == nil {
			continue
		}
		i := r.Idle
		rows = append(rows, []string{
			r.Model, fmtCount(i.Held), fmtBytes(i.RSSBefore), fmtBytes(i.RSSWithIdle), fmtPerConn(i.RSSPerConn),
			fmtCount(i.GoroutinesBefore) + " → " + fmtCount(i.GoroutinesWithIdle),
			fmtCount(i.ThreadsBefore) + " → " + fmtCount(i.ThreadsWithIdle),
		})
	}
	if rows == nil {
		return nil
	}
	header := []string{"model", "idle held", "RSS before", "RSS with idle", "per idle conn", "goroutines", "threads"}
	return append([][]string{header}, rows...)
}

// idleNotes say what limited the idle connections, one note per distinct
// limit: "19,836 of 50,000 idle connections held (virtual, nbio/virtual):
// the file descriptor limit …".
func idleNotes(runs []ModelRun) []string {
	type key struct {
		held, asked int
		why         string
	}
	var order []key
	models := map[key][]string{}
	for _, r := range runs {
		if r.Idle == nil || r.Idle.Limited == "" {
			continue
		}
		k := key{r.Idle.Held, r.Idle.Asked, r.Idle.Limited}
		if models[k] == nil {
			order = append(order, k)
		}
		models[k] = append(models[k], r.Model)
	}
	var notes []string
	for _, k := range order {
		notes = append(notes, fmt.Sprintf("%s of %s idle connections held (%s): %s",
			count(int64(k.held)), count(int64(k.asked)), strings.Join(models[k], ", "), k.why))
	}
	return notes
}

// idleVerdict sets the models' cost per idle connection side by side,
// each as a ratio of the first's: "an idle connection costs 19.3 KiB on
// virtual, 1.6 KiB (0.08×) on nbio/virtual".
func idleVerdict(runs []ModelRun) string {
	var parts []string
	var first float64
	for _, r := range runs {
		if r.Idle == nil || r.Idle.Held == 0 {
			continue
		}
		part := fmtPerConn(r.Idle.RSSPerConn)
		if first == 0 {
			first = r.Idle.RSSPerConn
		} else if first > 0 {
			part += fmt.Sprintf(" (%.2f×)", r.Idle.RSSPerConn/first)
		}
		parts = append(parts, part+" on "+r.Model)
	}
	if len(parts) == 0 {
		return ""
	}
	return "an idle connection costs " + joinAnd(parts)
}

func fmtPerConn(bytes float64) string {
	if bytes == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f KiB", bytes/1024)
}
