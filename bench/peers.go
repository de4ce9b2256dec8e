package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoPeers is returned by FindPeers when the peers' source tree or the go
// command is not there.
var ErrNoPeers = errors.New("peer frameworks not available")

// peerArgs is the command line of bench/peers' peer-server for a run.
func peerArgs(j job) []string {
	framework := strings.TrimPrefix(j.model, "peer:")
	args := []string{
		"-framework", framework,
		"-workload", j.scenario.Peer,
		"-addr", "127.0.0.1:0",
		"-metrics-addr", "127.0.0.1:0",
	}
	if j.plan.Service > 0 {
		args = append(args, "-sleep", j.plan.Service.String())
	}
	if j.plan.MaxThreads > 0 {
		args = append(args, "-max-threads", strconv.Itoa(j.plan.MaxThreads))
	}
	if d := j.scenario.Database; d != nil && d.Pool > 0 {
		args = append(args, "-db-pool", strconv.Itoa(d.Pool))
	}
	if j.scenario.Peer == actorEchoPeer {
		args = append(args, "-pairs", strconv.Itoa(j.plan.Connections))
	}
	return args
}

// FindPeers looks for the bench/peers module from dir upwards, the way the
// go command finds a module root, and returns its directory.
func FindPeers(dir string) (string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("%w: no go command: %w", ErrNoPeers, err)
	}
	for {
		candidate := filepath.Join(dir, "bench", "peers")
		if _, err := os.Stat(filepath.Join(candidate, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(candidate, "cmd", "peer-server")); err == nil {
				return candidate, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no bench/peers/cmd/peer-server above the current directory", ErrNoPeers)
		}
		dir = parent
	}
}

// BuildPeers builds bench/peers' peer-server from the module at src into
// outDir and returns the binary's path. It blocks for the build (seconds
// when cached, a minute or so the first time).
func BuildPeers(ctx context.Context, src, outDir string) (string, error) {
	return buildPeerCommand(ctx, src, outDir, "peer-server")
}

// BuildRemoteEcho builds bench/peers' remote-echo (the actor echo across
// processes on each library's remote transport) as BuildPeers does.
func BuildRemoteEcho(ctx context.Context, src, outDir string) (string, error) {
	return buildPeerCommand(ctx, src, outDir, "remote-echo")
}

func buildPeerCommand(ctx context.Context, src, outDir, name string) (string, error) {
	out := filepath.Join(outDir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-C", src, "-o", out, "./cmd/"+name)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w: %s", name, err, strings.TrimSpace(string(msg)))
	}
	return out, nil
}
