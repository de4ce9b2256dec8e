package bench

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/internal/harness/cmdtest"
	"github.com/loomrt/loom/web"
)

// The actor-echo server answers GET /echo with the messages one request
// moved, under each kind of model (a dispatcher by name, with and without a
// throughput, and an executor spec), and stops cleanly.
func TestActorEchoServes(t *testing.T) {
	sc := actorEcho()
	for _, model := range []string{"pool", "virtual", "pinned", "pool,throughput=5", "threads:2,throughput=300"} {
		t.Run(model, func(t *testing.T) {
			serve, err := sc.ServeModel(model)
			if err != nil {
				t.Fatal(err)
			}
			app, err := web.New()
			if err != nil {
				t.Fatal(err)
			}
			plan := sc.Quick
			plan.Connections = 4
			stop, err := serve(t.Context(), app, plan, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			// Registered first, so it runs after cmdtest.Serve has
			// stopped the app.
			t.Cleanup(func() {
				if err := stop(); err != nil {
					t.Errorf("stop: %v", err)
				}
			})
			url := cmdtest.Serve(t, app)

			client := &http.Client{Transport: &http.Transport{}}
			var wg sync.WaitGroup
			bodies := make(chan string, 8)
			for range 8 { // more requests than pairs: they wait for one
				wg.Go(func() {
					resp, err := client.Get(url + "/echo")
					if err != nil {
						t.Error(err)
						return
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					bodies <- string(b)
				})
			}
			wg.Wait()
			close(bodies)
			client.CloseIdleConnections()
			for b := range bodies {
				if b != sc.ExpectBody {
					t.Errorf("body %q; want %q", b, sc.ExpectBody)
				}
			}
		})
	}
}

func TestParseActorModel(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  actor.Dispatcher
	}{
		{"pool", actor.Dispatchers()[1]},
		{"pinned,throughput=300", actor.Dispatcher{Name: "pinned", Spec: "pool:1", PerActor: true, Throughput: 300}},
		{"virtual,throughput=5", actor.Dispatcher{Name: "virtual", Spec: "virtual", Throughput: 5}},
		{"threads:2", actor.Dispatcher{Name: "echo", Spec: "threads:2"}},
		{"pool:4,queue=8,throughput=1", actor.Dispatcher{Name: "echo", Spec: "pool:4,queue=8", Throughput: 1}},
	} {
		got, err := parseActorModel(tc.model)
		if err != nil || got != tc.want {
			t.Errorf("parseActorModel(%q) = %+v, %v; want %+v", tc.model, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ model, want string }{
		{"pooll", `actor-echo model "pooll": want a dispatcher`},
		{"actors", `actor-echo model "actors": want a dispatcher`}, // follows LOOM_EXECUTOR: not a model
		{"nbio/virtual", `actor-echo model "nbio/virtual"`},
		{"pool,throughput=0", `throughput "0": want a positive whole number`},
		{"pool,throughput=lots", `throughput "lots"`},
		{"pool,throughput=99999999999999999999", `throughput "99999999999999999999"`}, // out of range: Atoi gives its largest int
		{"pool,queue=5", `actor-echo model "pool,queue=5"`},
	} {
		if _, err := parseActorModel(tc.model); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseActorModel(%q) = %v; want an error containing %q", tc.model, err, tc.want)
		}
	}
}

// Every model the scenario runs by default parses, and the throughput axis
// is there: each dispatcher at the default, and at 5 and 300; --quick runs
// the seed's comparison, pool and virtual.
func TestActorEchoModels(t *testing.T) {
	sc := actorEcho()
	for _, p := range []Plan{sc.Full, sc.Quick} {
		for _, m := range p.Models {
			if err := sc.checkModel(m); err != nil {
				t.Error(err)
			}
		}
	}
	for _, m := range []string{"pool", "virtual", "pinned", "pool,throughput=5", "pool,throughput=300"} {
		if !slices.Contains(sc.Full.Models, m) {
			t.Errorf("%s: missing from the full models %v", m, sc.Full.Models)
		}
	}
	if !slices.Equal(sc.Quick.Models, []string{"pool", "virtual"}) {
		t.Errorf("quick models %v; want pool and virtual", sc.Quick.Models)
	}
	if !slices.Contains(sc.Full.Models, "pinned,throughput=300") {
		t.Errorf("full models %v: want every dispatcher at every throughput", sc.Full.Models)
	}
}

// A --models list that names a model the scenario cannot run is one error
// before anything starts, naming the scenario and the model.
func TestPlanChecksActorEchoModels(t *testing.T) {
	_, _, err := plan(Options{Scenarios: []string{"actor-echo"}, Models: []string{"pool", "nbio/virtual"}})
	if err == nil || !strings.Contains(err.Error(), "scenario actor-echo") || !strings.Contains(err.Error(), "nbio/virtual") {
		t.Errorf("plan(actor-echo, nbio/virtual) = %v; want an error naming the scenario and the model", err)
	}
	// A spec is both a web model and an actor-echo one.
	if _, _, err := plan(Options{Scenarios: []string{"hello", "actor-echo"}, Models: []string{"virtual", "pool:2"}}); err != nil {
		t.Errorf("plan(hello and actor-echo, virtual and pool:2) = %v; want nil", err)
	}
	jobs, _, err := plan(Options{Scenarios: []string{"actor-echo"}, PeerServer: "/bin/peer-server"})
	if err != nil {
		t.Fatal(err)
	}
	var peers []string
	for _, j := range jobs {
		if IsPeer(j.model) && j.round == 1 {
			peers = append(peers, j.model)
			if args := strings.Join(peerArgs(j), " "); !strings.Contains(args, "-workload actor-echo") || !strings.Contains(args, "-pairs 64") {
				t.Errorf("%s: peer-server %s; want the actor-echo workload with 64 pairs", j.model, args)
			}
		}
	}
	slices.Sort(peers)
	if !slices.Equal(peers, []string{"peer:hollywood", "peer:protoactor"}) {
		t.Errorf("actor-echo peer runs %v; want protoactor and hollywood", peers)
	}
}

func TestRatioNote(t *testing.T) {
	sr := ScenarioResult{
		ratios: [][2]string{{"pool", "peer:protoactor"}, {"virtual", "pool"}, {"pinned", "pool"}},
		Runs: []ModelRun{
			{Model: "pool", Status: StatusOK, Throughput: 300},
			{Model: "peer:protoactor", Status: StatusOK, Throughput: 100},
			{Model: "virtual", Status: StatusOK, Throughput: 240},
			{Model: "pinned", Status: StatusFailed},
		},
	}
	want := "pool ÷ peer:protoactor = 3.00× (too few rounds to tell), virtual ÷ pool = 0.80× (too few rounds to tell)"
	if got := ratioNote(&sr); got != want {
		t.Errorf("ratioNote = %q; want %q", got, want)
	}
	// A model that crashed after serving, or that served nothing, is in
	// no ratio, on either side.
	sr = ScenarioResult{
		ratios: [][2]string{{"pool", "crashed"}, {"idle", "pool"}, {"pool", "idle"}, {"crashed", "pool"}},
		Runs: []ModelRun{
			{Model: "pool", Status: StatusOK, Throughput: 300, Requests: 300},
			{Model: "crashed", Status: StatusCrashed, Throughput: 500, Requests: 500},
			{Model: "idle", Status: StatusOK},
		},
	}
	if got := ratioNote(&sr); got != "" {
		t.Errorf("ratioNote = %q; want none", got)
	}
}

func TestActorEchoLimit(t *testing.T) {
	l := actorEchoLimit(Plan{})
	if l.PerSecond <= 0 || l.Formula == "" {
		t.Errorf("got %+v; want a positive rate and a formula", l)
	}
}
