package bench

import (
	"fmt"
	"time"

	"github.com/loomrt/loom/internal/harness/techempower"
)

// The TechEmpower scenarios' sizes. A queries or updates request reads 20
// rows, the largest count of the suite's 1, 5, 10, 15, 20 runs; servers
// hold teDBPool connections, the same for every model and peer; limit:16
// admits as many requests as there are connections and queues the rest of
// a closed loop of teConnections.
const (
	teQueries     = 20
	teDBPool      = 16
	teConnections = 256
	tePipeline    = 16
)

// tePeers are the peer frameworks of the TechEmpower scenarios: the
// http.Handler routers, and fasthttp and fiber (v2 and v3), which serve on a
// server of their own.
var tePeers = []string{"nethttp", "chi", "gin", "echo", "fasthttp", "fiber", "fiber-v3"}

// teModels are the models of the TechEmpower scenarios: each executor on
// each engine, the bounded ones sized to the connection pool.
func teModels() []string {
	var m []string
	for _, engine := range []string{"", "nbio/"} {
		for _, spec := range []string{"virtual", "pool:16", "limit:16,queue=256", "adaptive"} {
			m = append(m, engine+spec)
		}
	}
	return m
}

// tePlan is the plan of a TechEmpower scenario: teConnections connections
// warmed up for 1 s and measured for 4 s, or virtual alone for 0.5 s after
// 0.1 s with quick.
func tePlan(quick bool) Plan {
	if quick {
		return Plan{Models: []string{"virtual"}, Peers: quickPeers, Connections: 64, Warmup: 100 * time.Millisecond,
			Duration: 500 * time.Millisecond, Timeout: 10 * time.Second}
	}
	return Plan{Models: teModels(), Connections: teConnections, Warmup: time.Second, Duration: 4 * time.Second, Timeout: 10 * time.Second}
}

func techEmpowerLimit(Plan) Limit {
	return Limit{Formula: "CPU-bound (the server, the generator and PostgreSQL share the cores): no closed form; compare with the peers"}
}

// techEmpower builds the scenario of one test type.
func techEmpower(test, path, workload, marker string, perRequest *Work, pipeline int) *Scenario {
	full, quick := tePlan(false), tePlan(true)
	full.Pipeline, quick.Pipeline = pipeline, pipeline
	changes := fmt.Sprintf("%s connections for 4 s after a 1 s warm-up", count(teConnections))
	if pipeline > 1 {
		changes += fmt.Sprintf(", each pipelining %d requests", pipeline)
	}
	changes += " (the suite loads 512, or 16,384 for plaintext, on many cores); every model on both engines."
	if perRequest != nil {
		changes += fmt.Sprintf(" Each server holds a pool of %d PostgreSQL connections; the schema is created and seeded for each run and dropped after it.", teDBPool)
	}
	changes += " Left out of --quick: `--quick --scenario " + test + "` runs virtual for 0.5 s beside bare net/http."
	s := &Scenario{
		Name:            test,
		Workload:        workload,
		Seed:            "TechEmpower Framework Benchmarks, test type " + test + " (rules of round 23, the suite's last)",
		Changes:         changes,
		Full:            full,
		Quick:           quick,
		Limit:           techEmpowerLimit,
		Targets:         get(path),
		ExpectBody:      marker,
		TechEmpower:     test,
		Peer:            test,
		Peers:           tePeers,
		LeaveOutOfQuick: true,
		Serve:           serveTechEmpower(test, teDBPool),
	}
	if perRequest != nil {
		s.Database = &Database{PerRequest: *perRequest, Pool: teDBPool}
	}
	return s
}

func teJSON() *Scenario {
	return techEmpower("json", "/json", `GET /json serializes {"message":"Hello, World!"} per request`, `"message"`, nil, 0)
}

func tePlaintext() *Scenario {
	return techEmpower("plaintext", "/plaintext", `GET /plaintext returns "Hello, World!", 16 requests pipelined per connection`,
		techempower.HelloWorld, nil, tePipeline)
}

func teDB() *Scenario {
	return techEmpower("db", "/db", "GET /db reads one random World row of 10,000 and returns it as JSON", `"randomNumber"`,
		&Work{WorldReads: 1}, 0)
}

func teQueriesScenario() *Scenario {
	return techEmpower("queries", fmt.Sprintf("/queries?queries=%d", teQueries),
		fmt.Sprintf("GET /queries?queries=%d reads %d random World rows, one query each, and returns them as a JSON array", teQueries, teQueries),
		`"randomNumber"`, &Work{WorldReads: teQueries}, 0)
}

func teFortunes() *Scenario {
	return techEmpower("fortunes", "/fortunes",
		"GET /fortunes reads every Fortune row, adds one, sorts them by message and renders an HTML table, escaped",
		techempower.ExtraFortune, &Work{FortuneScans: 1}, 0)
}

func teUpdates() *Scenario {
	return techEmpower("updates", fmt.Sprintf("/updates?queries=%d", teQueries),
		fmt.Sprintf("GET /updates?queries=%d reads %d random World rows, one query each, gives each a new random number and writes each back", teQueries, teQueries),
		`"randomNumber"`, &Work{WorldReads: teQueries, WorldUpdates: teQueries}, 0)
}

// The db-pool scenario: handlers that all wait for one of few database
// connections.
const (
	dbPoolSize    = 10
	dbPoolHold    = 5 * time.Millisecond
	dbPoolClients = 400
)

func dbPoolScenario() *Scenario {
	capacity := float64(dbPoolSize) / dbPoolHold.Seconds()
	return &Scenario{
		Name: "db-pool",
		Workload: fmt.Sprintf("GET /db-pool takes a connection from a pgxpool of %d and holds it through SELECT pg_sleep(0.005); "+
			"requests arrive at twice the pool's capacity (%s req/s) on at most %d client connections, each giving up 1 s after "+
			"it was due, sent or not", dbPoolSize, count(int64(2*capacity)), dbPoolClients),
		Seed: "The virtual-thread pitfall with a real database: handlers no longer wait for a thread, they all wait for a " +
			"connection in the driver's pool, and latency climbs with the queue there",
		Changes: fmt.Sprintf("Open loop at %s req/s for 6 s, at most %d connections, 1 s client timeout counted from each "+
			"request's due time; each run begins with %s req/s for 2 s, measured only for its p99 (the unloaded reference). "+
			"limit:10 admits as many requests as the pool has connections and queues 10 or 100 more, answering 503 beyond; "+
			"with maxwait=5ms it also refuses a request whose expected wait in that queue passes 5 ms (one query's time); "+
			"adaptive finds its limit from latency; pool:10 and pool:200 queue what their workers cannot take. "+
			"Left out of --quick: `--quick db-pool` runs virtual and limit:10,queue=10 for 2 s, long enough for virtual's queue to outlast the 1 s timeout.",
			count(int64(2*capacity)), dbPoolClients, count(int64(capacity/10))),
		Full: Plan{
			Models: []string{"virtual", "limit:10,queue=10", "limit:10,queue=100", "limit:10,queue=100,maxwait=5ms",
				"adaptive", "pool:10", "pool:200"},
			Connections: dbPoolClients, Rate: 2 * capacity, Duration: 6 * time.Second, Timeout: time.Second, Service: dbPoolHold,
			UnloadedRate: capacity / 10, UnloadedDuration: 2 * time.Second,
		},
		Quick: Plan{
			Models: []string{"virtual", "limit:10,queue=10"}, Connections: dbPoolClients, Rate: 2 * capacity,
			Duration: 2 * time.Second, Timeout: time.Second, Service: dbPoolHold,
			UnloadedRate: capacity / 10, UnloadedDuration: 400 * time.Millisecond,
		},
		Limit: func(p Plan) Limit {
			return Limit{PerSecond: capacity, Formula: fmt.Sprintf("goodput at most %d connections ÷ %s = %s req/s, whatever is offered (%s req/s)",
				dbPoolSize, dbPoolHold, count(int64(capacity)), count(int64(p.Rate)))}
		},
		Targets:         get("/db-pool"),
		ExpectBody:      dbPoolBody,
		Database:        &Database{Pool: dbPoolSize},
		LeaveOutOfQuick: true,
		Serve:           serveTechEmpower("db-pool", dbPoolSize),
		Ratios:          [][2]string{{"limit:10,queue=10", "virtual"}},
	}
}
