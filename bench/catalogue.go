package bench

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/loomrt/loom/load"
)

// The models every web scenario compares, after SCENARIOS.md: pool:16 is
// Undertow's default worker count on 2 cores (8 × cores), pool:200 Tomcat's
// default maxThreads.
func models(limitSpec string) []string {
	return []string{"virtual", "pool:16", "pool:200", "threads:16", "thread-per-task", limitSpec}
}

// onBothEngines adds, to the models of a scenario that compares the
// engines, nbio's runs of the default executor: one run more, not a
// second set of six (the executor and the engine are independent choices).
func onBothEngines(models []string) []string {
	return append(models, "nbio/virtual")
}

// Catalogue returns the scenarios of `loom bench`, in the order they run.
// Each call returns fresh values, so callers may change them.
func Catalogue() []*Scenario {
	return []*Scenario{
		caskAB(), caskSleep(), caskStatic(), caskTodo(), spring500ms(), cpuBound(), pinning(), overload(), stepLoad(), hello(), idleConns(),
		actorEcho(),
		teJSON(), tePlaintext(), teDB(), teQueriesScenario(), teFortunes(), teUpdates(), dbPoolScenario(),
	}
}

// Lookup returns the scenario of the catalogue named name.
func Lookup(scenarios []*Scenario, name string) (*Scenario, error) {
	for _, s := range scenarios {
		if s.Name == name {
			return s, nil
		}
	}
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.Name
	}
	return nil, fmt.Errorf("%w: %q (have %v)", ErrUnknownScenario, name, names)
}

func get(path string) func(base string) []load.Target {
	return func(base string) []load.Target {
		return []load.Target{{URL: base + path}}
	}
}

func caskAB() *Scenario {
	return &Scenario{
		Name:     "cask-ab",
		Workload: "GET / sleeps 1 s and returns 38 bytes; every connection opens at once and sends one request (ab -n N -c N)",
		Seed:     "Cask PR: ab -n 10000 -c 10000 against a 1 s handler: 230 req/s on Undertow's worker pool, 1,545 req/s on virtual threads (6.5 s run)",
		Changes: "Same 10,000 connections and 10,000 requests. Runs are capped at 10 s, so a model that would need " +
			"625 s (16 workers × 1 req/s) reports the rate it reached. limit:1000 queues up to 9,000 (Spring's concurrency " +
			"limit blocks rather than rejects). nbio/virtual serves on the event-loop engine. --quick: 300 connections and " +
			"requests sleeping 300 ms, 0.6 s cap, virtual and pool:16 beside bare net/http.",
		Peer: "sleep",
		Full: Plan{
			Models: onBothEngines(models("limit:1000,queue=9000")), Connections: 10000, Requests: 10000,
			Duration: 10 * time.Second, Timeout: 30 * time.Second, Service: time.Second,
		},
		Quick: Plan{
			Models: []string{"virtual", "pool:16"}, Peers: quickPeers, Connections: 300, Requests: 300,
			Duration: 600 * time.Millisecond, Timeout: 10 * time.Second, Service: 300 * time.Millisecond,
		},
		Limit:      waitLimit,
		Targets:    get("/"),
		ExpectBody: helloBody,
		Serve:      serveSleep("/"),
	}
}

func caskSleep() *Scenario {
	return &Scenario{
		Name:     "cask-sleep",
		Workload: "GET / sleeps 100 ms; 100 connections for a fixed time (wrk -c100)",
		Seed:     "Cask benchmark: wrk -t4 -c100 -d30s on a 100 ms handler: 38 req/s on a 4-thread pool (1,076 timeouts), 936 req/s on virtual threads",
		Changes: "Same 100 connections and 100 ms; 5 s instead of 30 s, in each of the rounds (0.5 s with --quick, virtual and " +
			"pool:16 beside bare net/http). pool:16 replaces the seed's 4-thread pool; nbio/virtual serves on the event-loop engine.",
		Peer: "sleep",
		Full: Plan{
			Models: onBothEngines(models("limit:100")), Connections: 100, Duration: 5 * time.Second,
			Timeout: 10 * time.Second, Service: 100 * time.Millisecond,
		},
		Quick: Plan{
			Models: []string{"virtual", "pool:16"}, Peers: quickPeers, Connections: 100, Duration: 500 * time.Millisecond,
			Timeout: 10 * time.Second, Service: 100 * time.Millisecond,
		},
		Limit:      waitLimit,
		Targets:    get("/"),
		ExpectBody: helloBody,
		Serve:      serveSleep("/"),
	}
}

func caskStatic() *Scenario {
	return &Scenario{
		Name:     "cask-static",
		Workload: "GET /static/page.html serves a 4 KiB file from disk (web.App.Static over os.DirFS)",
		Seed:     "Cask benchmark: 81.8k req/s on platform threads vs 75.5k on virtual threads (−8%), but it served the string \"Hello!\", not a file",
		Changes: "Serves a real file written to a temporary directory. 100 connections for 4 s after a 1 s warm-up (0.5 s after 0.1 s " +
			"with --quick, virtual and pool:16); the generator shares the 2 cores with the server. limit:16 queues up to 100, so a closed " +
			"loop of 100 is never rejected.",
		Full:  cpuPlan(models("limit:16,queue=100"), false),
		Quick: cpuPlan([]string{"virtual", "pool:16"}, true),
		Limit: func(Plan) Limit {
			return Limit{Formula: "CPU-bound: no closed form; compare the models with each other"}
		},
		Targets:    get("/static/page.html"),
		ExpectBody: staticMarker,
		Serve:      serveStatic,
	}
}

func caskTodo() *Scenario {
	return &Scenario{
		Name: "cask-todo",
		Workload: "the todo app of examples/todo on SQLite: per 10 requests, 4 list the completed todos, 2 get one, " +
			"2 create, 2 toggle; every response must be 2xx and carry a todo",
		Seed: "Cask benchmark: 81.9k req/s (platform) vs 76.1k (virtual), but every response was a 404: the route did not exist",
		Changes: "A real database (SQLite in a temporary directory) and routes that exist: the run fails if any response " +
			"is not 2xx or lacks \"id\". 100 connections for 4 s after a 1 s warm-up (0.5 s after 0.1 s with --quick, virtual " +
			"and pool:16). limit:16 queues up to 100.",
		Full:  cpuPlan(models("limit:16,queue=100"), false),
		Quick: cpuPlan([]string{"virtual", "pool:16"}, true),
		Limit: func(Plan) Limit {
			return Limit{Formula: "CPU- and database-bound: no closed form; compare the models with each other"}
		},
		Targets:    todoTargets,
		ExpectBody: `"id":`,
		Serve:      serveTodo,
	}
}

func spring500ms() *Scenario {
	return &Scenario{
		Name:     "spring-500ms",
		Workload: "GET /api/v1/hello blocks 500 ms; 400 connections send a fixed number of requests; the server has GOMAXPROCS=1 and GOMEMLIMIT=128MiB",
		Seed: "Spring talk: 100,000 requests, 1 CPU, 128 MB: Undertow on virtual threads 150 s against a 125 s limit (83%), " +
			"Tomcat virtual 170 s, Jetty out of memory, Undertow platform threads 3,131 s",
		Changes: "6,000 requests instead of 100,000 (a 7.5 s floor per model and round instead of 125 s), capped at 15 s so that " +
			"slow models report their rate instead of running for minutes. --quick: 400 requests (0.5 s floor), 0.75 s cap, " +
			"virtual and pool:16.",
		Env: []string{"GOMAXPROCS=1", "GOMEMLIMIT=128MiB"},
		Full: Plan{
			Models: models("limit:400"), Connections: 400, Requests: 6000, Duration: 15 * time.Second,
			Timeout: 30 * time.Second, Service: 500 * time.Millisecond,
		},
		Quick: Plan{
			Models: []string{"virtual", "pool:16"}, Connections: 400, Requests: 400, Duration: 750 * time.Millisecond,
			Timeout: 10 * time.Second, Service: 500 * time.Millisecond,
		},
		Limit:      waitLimit,
		Targets:    get("/api/v1/hello"),
		ExpectBody: helloBody,
		Serve:      serveSleep("/api/v1/hello"),
	}
}

func cpuBound() *Scenario {
	return &Scenario{
		Name:     "cpu",
		Workload: fmt.Sprintf("GET /hash hashes 4 KiB with SHA-256 %d times (about 1 MiB of hashing) and returns the digest", cpuRounds),
		Seed:     "Cask docs: virtual threads give nothing for CPU-bound work",
		Changes: "No seed figures to match; 100 connections for 4 s after a 1 s warm-up (0.5 s after 0.1 s with --quick, " +
			"virtual and thread-per-task). limit:4 is twice the cores.",
		Full:       cpuPlan(models("limit:4,queue=100"), false),
		Quick:      cpuPlan([]string{"virtual", "thread-per-task"}, true),
		Limit:      cpuLimit,
		Targets:    get("/hash"),
		ExpectBody: "sha256=",
		Serve:      serveCPU,
	}
}

func pinning() *Scenario {
	return &Scenario{
		Name: "pinning",
		Workload: "GET /block holds its OS thread in a raw nanosleep system call (as a cgo call or a blocking " +
			"driver would); more connections than the server may have threads",
		Seed: "None measured it directly: the JVM form is virtual threads pinned to their carrier (synchronized, native " +
			"calls) until the pool deadlocks; Go's form is one OS thread per blocked goroutine until " +
			"`fatal error: thread exhaustion` at 10,000 threads",
		Changes: "11,000 connections for 15 s against Go's default limit of 10,000 threads, each call blocking 3 s instead of 1 s: " +
			"a goroutine entering a blocking call keeps its P until sysmon hands it off, so on 2 cores calls start at only a few " +
			"thousand a second, and with 1 s calls a 40 s run plateaued at about 5,200 threads (no crash, p99 15 s). " +
			"--quick: 1 s calls, 1,100 connections for 1.5 s, the server's limit lowered to 500 threads (debug.SetMaxThreads), " +
			"virtual beside bare net/http. " +
			"limit:N rejects (503) what it cannot run at once, which is the point. loom's servers run web's thread watch " +
			"(refusing with 503 while the threads in use pass 80% of the limit); peer:nethttp serves the same call on bare " +
			"net/http, unguarded: the control that still crashes.",
		Peer:  "block",
		Peers: []string{"nethttp"},
		Full: Plan{
			Models: models("limit:8000"), Connections: 11000, Duration: 15 * time.Second,
			Timeout: 30 * time.Second, Service: 3 * time.Second,
		},
		Quick: Plan{
			Models: []string{"virtual"}, Connections: 1100, Duration: 1500 * time.Millisecond,
			Timeout: 10 * time.Second, Service: time.Second, MaxThreads: 500,
		},
		Limit:      pinningLimit,
		Targets:    get("/block"),
		ExpectBody: pinnedBody,
		Serve:      servePinning,
	}
}

func overload() *Scenario {
	return &Scenario{
		Name: "overload",
		Workload: fmt.Sprintf("GET /query takes one of %d \"database connections\" for %s (waiting for one as long as the client does); "+
			"requests arrive at twice that capacity, and clients give up after 1 s", overloadSlots, overloadHold),
		Seed: "None of the seeds: the Jetty out-of-memory in the Spring talk is its extreme. Unbounded concurrency queues " +
			"the excess until clients time out; a limit turns it away at once with 503.",
		Changes: "Open loop at 2,000 req/s for 6 s (0.6 s with --quick, virtual and adaptive), 1 s client timeout. limit:10 admits " +
			"as many requests as there are connections, with a queue of 20, chosen by hand; adaptive finds its limit from latency. " +
			"Each run begins with 200 req/s for 2 s (0.4 s with --quick) on the same server, measured only for its p99: the " +
			"unloaded reference, and the server's warm-up.",
		Full: Plan{
			Models: append(models("limit:10,queue=20"), "adaptive"), Rate: 2 * float64(overloadCapacity), Duration: 6 * time.Second,
			Timeout: time.Second, Service: overloadHold,
			UnloadedRate: overloadUnloadedRate, UnloadedDuration: 2 * time.Second,
		},
		Quick: Plan{
			Models: []string{"virtual", "adaptive"}, Rate: 2 * float64(overloadCapacity), Duration: 600 * time.Millisecond,
			Timeout: time.Second, Service: overloadHold,
			UnloadedRate: overloadUnloadedRate, UnloadedDuration: 400 * time.Millisecond,
		},
		Limit: func(p Plan) Limit {
			return Limit{PerSecond: float64(overloadCapacity), Formula: fmt.Sprintf(
				"goodput at most %d connections ÷ %s = %s req/s, whatever is offered (%s req/s)",
				overloadSlots, overloadHold, count(int64(overloadCapacity)), count(int64(p.Rate)))}
		},
		Targets:    get("/query"),
		ExpectBody: overloadBody,
		Serve:      serveOverload,
	}
}

func hello() *Scenario {
	return &Scenario{
		Name:     "hello",
		Workload: "GET / returns \"Hello World!\"; 100 connections: the framework's own overhead",
		Seed:     "Cask's minimal application; here to set loom's web package beside bare net/http, chi, gin and echo",
		Changes: "100 connections for 4 s after a 1 s warm-up, on both engines and over TLS (std+tls/virtual: HTTP/1.1 over TLS " +
			"on keep-alive connections), compared with the peer frameworks when they are built. --quick: 0.5 s after 0.1 s, " +
			"virtual beside bare net/http.",
		Peer:  "hello",
		Full:  cpuPlan(helloModels(), false),
		Quick: withPeers(cpuPlan([]string{"virtual"}, true), quickPeers),
		Limit: func(Plan) Limit {
			return Limit{Formula: "CPU-bound: no closed form; compare with bare net/http"}
		},
		Targets:    get("/"),
		ExpectBody: helloBody,
		Serve:      serveHello,
	}
}

// cpuPlan is the plan of a CPU-bound scenario: 100 connections, warmed up
// for 1 s and measured for 4 s in each round; 0.1 s and 0.5 s with quick.
func cpuPlan(models []string, quick bool) Plan {
	if quick {
		return Plan{Models: models, Connections: 100, Warmup: 100 * time.Millisecond, Duration: 500 * time.Millisecond}
	}
	return Plan{Models: models, Connections: 100, Warmup: time.Second, Duration: 4 * time.Second}
}

// quickPeers are the peers of the quick plans: bare net/http, the reference
// loom's own figures are set beside.
var quickPeers = []string{"nethttp"}

func withPeers(p Plan, peers []string) Plan {
	p.Peers = peers
	return p
}

// helloModels measure the framework's overhead on each engine, with and
// without a pool between the engine and the handler, and what TLS adds on
// std (std+tls/virtual beside virtual).
func helloModels() []string {
	return []string{"virtual", "pool:16", "nbio/virtual", "nbio/pool:16", "std+tls/virtual"}
}

// pinningLimit: each blocked request holds a thread for the service time,
// so at most min(connections, threads allowed) run at once.
func pinningLimit(p Plan) Limit {
	threads := p.MaxThreads
	if threads == 0 {
		threads = defaultMaxThreads
	}
	n := min(p.Connections, threads)
	perSecond := float64(n) / p.Service.Seconds()
	return Limit{
		PerSecond: perSecond,
		Formula: fmt.Sprintf("min(%s connections, %s threads allowed) ÷ %s = %s req/s; a model that needs a thread per connection crashes",
			count(int64(p.Connections)), count(int64(threads)), p.Service, count(int64(perSecond))),
	}
}

// defaultMaxThreads is Go's default OS thread limit (runtime/debug.SetMaxThreads).
const defaultMaxThreads = 10000

// todoTargets is the cask-todo mix. Todos 1–10 are toggled; 11–20 stay
// completed, so the completed list is never empty; creates add active todos,
// which the completed list skips.
func todoTargets(base string) []load.Target {
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	list := load.Target{URL: base + "/api/todos?state=completed"}
	var targets []load.Target
	for i := range 2 {
		targets = append(targets,
			list,
			load.Target{URL: base + "/api/todos/" + strconv.Itoa(11+i)},
			list,
			load.Target{Method: http.MethodPost, URL: base + "/api/todos", Header: jsonHeader, Body: []byte(`{"text":"bench"}`)},
			load.Target{Method: http.MethodPost, URL: base + "/api/todos/" + strconv.Itoa(1+i) + "/toggle"},
		)
	}
	return targets
}
