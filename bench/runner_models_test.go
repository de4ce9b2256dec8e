package bench

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// modelsBy lists the models each scenario of jobs runs, in the plan's
// order (each round runs them in an order of its own).
func modelsBy(jobs []job) map[string][]string {
	by := map[string][]string{}
	for _, j := range jobs {
		by[j.scenario.Name] = j.models
	}
	return by
}

// withoutQuickNote returns notes without their first, which must say what
// --quick leaves out unless named.
func withoutQuickNote(t *testing.T, notes []string) []string {
	t.Helper()
	var out []string
	for _, s := range Catalogue() {
		if s.LeaveOutOfQuick {
			out = append(out, s.Name)
		}
	}
	want := "--quick leaves out " + joinAnd(out) + "; name them with --scenario to run their quick plans"
	if len(notes) == 0 || notes[0] != want {
		t.Errorf("notes %q; want the first %q", notes, want)
		return notes
	}
	return notes[1:]
}

// TestPlanModelsGivenWithoutScenarios: with no scenario named, a scenario
// leaves out the models it cannot serve, and is skipped when it serves
// none, each with a note naming it and the model; the others run them all.
func TestPlanModelsGivenWithoutScenarios(t *testing.T) {
	jobs, notes, err := plan(Options{Quick: true, Models: []string{"nbio/virtual"}})
	if err != nil {
		t.Fatalf("plan(--models nbio/virtual) = %v; want actor-echo skipped, the rest run", err)
	}
	by := modelsBy(jobs)
	for _, s := range Catalogue() {
		want := []string{"nbio/virtual"}
		if s.Name == "actor-echo" || s.LeaveOutOfQuick {
			want = nil
		}
		if !slices.Equal(by[s.Name], want) {
			t.Errorf("%s runs %q; want %q", s.Name, by[s.Name], want)
		}
	}
	notes = withoutQuickNote(t, notes)
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "actor-echo skipped: it serves none of the models given (") ||
		!strings.Contains(notes[0], `"nbio/virtual"`) {
		t.Errorf("notes %q; want one saying actor-echo was skipped, naming nbio/virtual", notes)
	}

	// A model some scenarios serve and others not: those leave it out and
	// keep the rest; one note names them all.
	jobs, notes, err = plan(Options{Quick: true, Models: []string{"virtual", "pinned"}})
	if err != nil {
		t.Fatal(err)
	}
	by = modelsBy(jobs)
	if got := by["actor-echo"]; !slices.Equal(got, []string{"virtual", "pinned"}) {
		t.Errorf("actor-echo runs %q; want virtual and pinned", got)
	}
	if got := by["hello"]; !slices.Equal(got, []string{"virtual"}) {
		t.Errorf("hello runs %q; want virtual alone", got)
	}
	notes = withoutQuickNote(t, notes)
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "cask-ab, cask-sleep, ") ||
		!strings.Contains(notes[0], " and idle-conns run without the models they cannot serve (") ||
		!strings.Contains(notes[0], `"pinned"`) || strings.Contains(notes[0], "actor-echo") {
		t.Errorf("notes %q; want one naming the web scenarios and pinned, not actor-echo", notes)
	}
}

// TestPlanRefusesModelsNoScenarioServes: a model that no selected scenario
// serves is an error, named scenarios or not; a scenario named with a model
// it cannot serve is one too, naming both.
func TestPlanRefusesModelsNoScenarioServes(t *testing.T) {
	for _, tt := range []struct {
		scenarios, models []string
		want              []string
	}{
		{nil, []string{"virtual", "pol:16"}, []string{"no scenario serves pol:16", `"pol:16"`}},
		{nil, []string{"peer:tomcat"}, []string{"no scenario serves peer:tomcat", "no peer framework serves this scenario",
			"this scenario's peers are nethttp, chi, gin and echo", "this scenario's peers are protoactor and hollywood"}},
		{[]string{"hello", "actor-echo"}, []string{"virtual", "nbio/virtual"}, []string{"scenario actor-echo cannot serve nbio/virtual"}},
		{[]string{"hello"}, []string{"pinned"}, []string{"scenario hello cannot serve pinned"}},
		{[]string{"cpu"}, []string{"peer:nethttp"}, []string{"scenario cpu cannot serve peer:nethttp", "no peer framework serves"}},
		{[]string{"actor-echo"}, []string{"peer:gin"}, []string{"scenario actor-echo cannot serve peer:gin", "protoactor and hollywood"}},
	} {
		_, _, err := plan(Options{Scenarios: tt.scenarios, Models: tt.models, Quick: true, PeerServer: "/bin/peer-server"})
		if !errors.Is(err, ErrBadModel) {
			t.Errorf("plan(%q, --models %q) = %v; want ErrBadModel", tt.scenarios, tt.models, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("plan(%q, --models %q) = %v; want it to say %q", tt.scenarios, tt.models, err, w)
			}
		}
	}
}

// TestPlanPeersFollowTheModelsRule: a peer given as a model runs where it
// serves, the others skip it with a note, and it needs a peer-server; with
// a peer-server and models naming no peer, each scenario's peers join the
// models given (loom bench --models virtual --peers).
func TestPlanPeersFollowTheModelsRule(t *testing.T) {
	jobs, notes, err := plan(Options{Quick: true, Models: []string{"peer:gin"}, PeerServer: "/bin/peer-server"})
	if err != nil {
		t.Fatal(err)
	}
	by := modelsBy(jobs)
	if len(by) != 3 || by["hello"] == nil || by["cask-sleep"] == nil || by["cask-ab"] == nil {
		t.Errorf("peer:gin runs in %v; want hello, cask-sleep and cask-ab", by)
	}
	want := []string{
		`cask-static, cask-todo, spring-500ms, cpu, overload, step-load and idle-conns skipped: they serve none of the models given (model "peer:gin": no peer framework serves this scenario)`,
		`pinning skipped: it serves none of the models given (model "peer:gin": this scenario's peers are nethttp)`,
		`actor-echo skipped: it serves none of the models given (model "peer:gin": this scenario's peers are protoactor and hollywood)`,
	}
	if notes = withoutQuickNote(t, notes); !slices.Equal(notes, want) {
		t.Errorf("notes\n%q\nwant\n%q", notes, want)
	}

	if _, _, err := plan(Options{Quick: true, Models: []string{"virtual", "peer:gin"}}); !errors.Is(err, ErrBadModel) ||
		!strings.Contains(err.Error(), "peer:gin") || !strings.Contains(err.Error(), "no peer-server") {
		t.Errorf("plan(--models peer:gin, no peer-server) = %v; want ErrBadModel naming peer:gin", err)
	}

	jobs, _, err = plan(Options{Scenarios: []string{"hello", "actor-echo", "cpu"}, Models: []string{"virtual"},
		PeerServer: "/bin/peer-server"})
	if err != nil {
		t.Fatal(err)
	}
	by = modelsBy(jobs)
	for name, want := range map[string][]string{
		"hello":      {"virtual", "peer:nethttp", "peer:chi", "peer:gin", "peer:echo"},
		"actor-echo": {"virtual", "peer:protoactor", "peer:hollywood"},
		"cpu":        {"virtual"},
	} {
		if !slices.Equal(by[name], want) {
			t.Errorf("--models virtual with peers: %s runs %q; want %q", name, by[name], want)
		}
	}
	// The quick plans' peers are bare net/http alone where they serve.
	jobs, _, err = plan(Options{Scenarios: []string{"hello", "actor-echo"}, Quick: true, PeerServer: "/bin/peer-server"})
	if err != nil {
		t.Fatal(err)
	}
	by = modelsBy(jobs)
	if want := []string{"virtual", "peer:nethttp"}; !slices.Equal(by["hello"], want) {
		t.Errorf("--quick with peers: hello runs %q; want %q", by["hello"], want)
	}
	if want := []string{"pool", "virtual", "peer:protoactor"}; !slices.Equal(by["actor-echo"], want) {
		t.Errorf("--quick with peers: actor-echo runs %q; want %q", by["actor-echo"], want)
	}
	// Models that name a peer are the whole list: no other peer joins.
	jobs, _, err = plan(Options{Scenarios: []string{"hello"}, Quick: true, Models: []string{"virtual", "peer:chi"},
		PeerServer: "/bin/peer-server"})
	if err != nil {
		t.Fatal(err)
	}
	if got := modelsBy(jobs)["hello"]; !slices.Equal(got, []string{"virtual", "peer:chi"}) {
		t.Errorf("--models virtual,peer:chi: hello runs %q; want those two alone", got)
	}
}

// TestRunNotesWhatItLeftOut: the notes of the plan reach the report.
func TestRunNotesWhatItLeftOut(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var catalogue []*Scenario
	for _, s := range testCatalogue() {
		if s.Name == "test-ok" || s.Name == "test-own-models" {
			catalogue = append(catalogue, s)
		}
	}
	report, err := Run(t.Context(), Options{
		Models: []string{"beta"}, Quick: true, Notes: []string{"given"},
		Executable: exe, Env: []string{serveEnv + "=1"}, Catalogue: catalogue,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Scenarios) != 1 || report.Scenarios[0].Name != "test-own-models" {
		t.Errorf("ran %d scenarios; want test-own-models alone", len(report.Scenarios))
	}
	if len(report.Notes) < 2 || report.Notes[0] != "given" || !strings.HasPrefix(report.Notes[1], "test-ok skipped: ") ||
		!strings.Contains(report.Notes[1], `"beta"`) {
		t.Errorf("notes %q; want the given one, then test-ok skipped for beta", report.Notes)
	}
}

// TestModelTLS: only an engine named with "+tls" before the slash serves
// over TLS; a spec or a peer that ends so does not.
func TestModelTLS(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  bool
	}{
		{"std+tls/virtual", true},
		{"std/virtual", false},
		{"virtual", false},
		{"virtual+tls", false},
		{"peer:gin+tls/x", false},
	} {
		if got := modelTLS(tc.model); got != tc.want {
			t.Errorf("modelTLS(%q) = %t; want %t", tc.model, got, tc.want)
		}
	}
}

// TestPlanLeavesOutOfQuickOnlyUnnamed: --quick leaves out a scenario marked
// so unless it is named; a full run keeps it.
func TestPlanLeavesOutOfQuickOnlyUnnamed(t *testing.T) {
	p := Plan{Models: []string{"virtual"}, Connections: 1, Duration: time.Second}
	kept := &Scenario{Name: "kept", Quick: p, Full: p, Limit: waitLimit}
	slow := &Scenario{Name: "slow", Quick: p, Full: p, Limit: waitLimit, LeaveOutOfQuick: true}
	for _, tc := range []struct {
		opts Options
		want []string
	}{
		{Options{Quick: true}, []string{"kept"}},
		{Options{Quick: true, Scenarios: []string{"slow"}}, []string{"slow"}},
		{Options{}, []string{"kept", "slow"}},
	} {
		tc.opts.Catalogue, tc.opts.Rounds = []*Scenario{kept, slow}, 1
		jobs, _, err := plan(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, j := range jobs {
			got = append(got, j.scenario.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("plan(quick %t, scenarios %q) runs %q; want %q", tc.opts.Quick, tc.opts.Scenarios, got, tc.want)
		}
	}
}
