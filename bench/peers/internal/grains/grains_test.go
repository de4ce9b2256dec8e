package grains

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/types/known/typepb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func TestMain(m *testing.M) {
	// The hosts and the driver are this test binary re-executed.
	if child, err := Child(); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// The quick run starts three hosts and a driver, activates every grain,
// loads them, and every reply the driver checked was right: Run returns an
// error for a single failed or wrong one.
func TestRunQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four processes and runs a cluster for a few seconds")
	}
	if runtime.GOOS != "linux" {
		t.Skip("measures CPU and memory from /proc")
	}
	cfg := Quick()
	cfg.Timeout = 3 * time.Minute // a loaded machine running -race
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Grains != cfg.Grains || r.Replies <= 0 || r.Elapsed < cfg.Duration {
		t.Errorf("%d grains, %d replies in %v; want %d grains and replies over at least %v", r.Config.Grains, r.Replies, r.Elapsed, cfg.Grains, cfg.Duration)
	}
	if r.ActivationP50 <= 0 || r.ActivationP99 < r.ActivationP50 || r.ActivationTime < r.ActivationP99 {
		t.Errorf("activation p50 %v, p99 %v, all %v; want 0 < p50 <= p99 <= all", r.ActivationP50, r.ActivationP99, r.ActivationTime)
	}
	if r.CPU <= 0 || len(r.Processes) != cfg.Hosts+1 || !strings.HasPrefix(r.Processes[0], "driver ") {
		t.Errorf("CPU %v over %q; want CPU over the driver and %d hosts", r.CPU, r.Processes, cfg.Hosts)
	}
	// 5,000 activations, each an actor with its mailbox and registry
	// entries, cannot fit in 1 MB.
	if r.HeapAfter < r.HeapBefore+1<<20 || r.RSSBefore == 0 {
		t.Errorf("hosts' heap %d before, %d after; RSS %d before; want growth over 1 MiB and an RSS", r.HeapBefore, r.HeapAfter, r.RSSBefore)
	}
}

func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name string
		resp any
		ok   bool
	}{
		{"right", &typepb.EnumValue{Name: "e7", Number: 3}, true},
		{"another grain", &typepb.EnumValue{Name: "e8", Number: 3}, false},
		{"a count behind", &typepb.EnumValue{Name: "e7", Number: 2}, false},
		{"a count ahead", &typepb.EnumValue{Name: "e7", Number: 4}, false},
		{"another type", wrapperspb.String("e7"), false},
		{"none", nil, false},
	} {
		err := verify(tc.resp, "e7", 3)
		if (err == nil) != tc.ok {
			t.Errorf("%s: verify = %v; want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestConfigRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Hosts: -1}, "hosts is -1"},
		{Config{Grains: -5}, "grains is -5"},
		{Config{InFlight: -1}, "in-flight is -1"},
		{Config{Duration: -1}, "duration is -1"},
		{Config{Timeout: -1}, "timeout is -1"},
		{Config{Grains: 10, InFlight: 11}, "11 in flight over 10 grains"},
	} {
		_, err := Run(context.Background(), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v) = %v; want an error saying %q", tc.cfg, err, tc.want)
		}
	}
	// The edge: as many in flight as grains is allowed.
	if _, err := (Config{Grains: 10, InFlight: 10}).withDefaults(); err != nil {
		t.Errorf("10 in flight over 10 grains: %v; want no error", err)
	}
}

func TestParseTopology(t *testing.T) {
	ms, err := parseTopology("a@127.0.0.1:7001,b@127.0.0.1:7002")
	if err != nil || len(ms) != 2 || ms[1].Id != "b" || ms[1].Address() != "127.0.0.1:7002" || ms[0].Kinds[0] != Kind {
		t.Fatalf("parseTopology = %v, %v; want members a and b at their addresses, hosting %s", ms, err, Kind)
	}
	for _, bad := range []string{"", "a", "@127.0.0.1:1", "a@127.0.0.1", "a@127.0.0.1:x"} {
		if _, err := parseTopology(bad); err == nil {
			t.Errorf("parseTopology(%q) succeeded; want an error", bad)
		}
	}
}
