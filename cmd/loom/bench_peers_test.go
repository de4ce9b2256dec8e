package main

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/loomrt/loom/bench"
)

// TestWantsPeers: when the peer-server is built, and whether a failed
// build is an error: a peer named in --models demands it, as --peers given
// does where a selected scenario has peers (and is an error where none
// has); --models without a peer builds none unless --peers is given.
func TestWantsPeers(t *testing.T) {
	for _, tt := range []struct {
		name            string
		names, models   []string
		peers, explicit bool
		build, demanded bool
		err             string
	}{
		{"default, all scenarios", nil, nil, true, false, true, false, ""},
		{"default, a scenario with peers", []string{"cpu", "hello"}, nil, true, false, true, false, ""},
		{"default, a scenario without", []string{"cpu"}, nil, true, false, false, false, ""},
		{"--models without a peer", nil, []string{"virtual"}, true, false, false, false, ""},
		{"--models without a peer, --peers", nil, []string{"virtual"}, true, true, true, true, ""},
		{"--models with a peer", []string{"hello"}, []string{"virtual", "peer:gin"}, true, false, true, true, ""},
		{"--peers on scenarios with peers", []string{"actor-echo"}, nil, true, true, true, true, ""},
		{"--peers on scenarios without", []string{"cpu", "overload"}, nil, true, true, false, false,
			"--peers: no peer framework serves cpu, overload"},
		{"--peers=false", nil, nil, false, true, false, false, ""},
		{"an unknown scenario", []string{"no-such"}, nil, true, false, false, false, "no-such"},
	} {
		build, demanded, err := wantsPeers(tt.names, tt.models, tt.peers, tt.explicit)
		if build != tt.build || demanded != tt.demanded {
			t.Errorf("%s: build %t, demanded %t; want %t, %t", tt.name, build, demanded, tt.build, tt.demanded)
		}
		if got := errString(err); tt.err == "" && got != "" || !strings.Contains(got, tt.err) {
			t.Errorf("%s: error %q; want one containing %q", tt.name, got, tt.err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestBenchPeersFlagContradictions: --peers=false beside a peer in
// --models, and --peers on scenarios no peer serves, are errors naming
// what contradicts, before any run or build starts.
func TestBenchPeersFlagContradictions(t *testing.T) {
	t.Setenv(mainEnv, "1") // should a run start after all, its server is this binary
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"hello", "--quick", "--peers=false", "--models", "virtual,peer:gin"}, []string{"--peers=false", "peer:gin"}},
		{[]string{"cpu", "--quick", "--peers", "--models", "virtual"}, []string{"--peers", "cpu"}},
		{[]string{"actor-echo", "--quick", "--peers=false", "--models", "nbio/virtual"}, []string{"actor-echo", "nbio/virtual"}},
	} {
		wantRefused(t, tc.args, tc.want)
	}
}

// TestBenchPeersDemandedMustBuild: with no go command to build the
// peer-server, a peer named in --models, or --peers given, is an error
// before any run, not a note beside runs without them.
func TestBenchPeersDemandedMustBuild(t *testing.T) {
	t.Setenv(mainEnv, "1") // should a run start after all, its server is this binary
	t.Setenv("PATH", t.TempDir())
	for _, args := range [][]string{
		{"hello", "--quick", "--models", "virtual,peer:gin"},
		{"hello", "--quick", "--models", "virtual", "--peers"},
	} {
		stderr, err := execBench(t, args...)
		if !errors.Is(err, bench.ErrNoPeers) {
			t.Errorf("loom bench %q without go: %v; want bench.ErrNoPeers", args, err)
		}
		if strings.Contains(stderr, "runs, about") {
			t.Errorf("loom bench %q without go started runs:\n%s", args, stderr)
		}
	}
}

// TestBenchRemoteEcho: `loom bench remote-echo` builds bench/peers'
// remote-echo from the source tree and prints a row per library run.
func TestBenchRemoteEcho(t *testing.T) {
	if testing.Short() {
		t.Skip("builds bench/peers' remote-echo")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bench.FindPeers(wd); err != nil {
		t.Skip(err)
	}
	root := newRootCmd()
	var out, errOut strings.Builder
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"bench", "remote-echo", "--libraries", "loom", "--pairs", "2", "--warmup", "100ms",
		"--duration", "300ms", "--ask-rate", "50", "--ask-for", "200ms"})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "msg/s") || !strings.Contains(out.String(), "\nloom ") {
		t.Errorf("output:\n%s\nwant a header and a loom row", out.String())
	}
}
