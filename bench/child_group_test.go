//go:build unix

package bench

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestOwnProcessGroupStopsTheWholeGroup: cancelling a child sends SIGTERM
// to its process group, so a process the server started goes too. The
// grandchild here holds the pipe's write end: the read end sees EOF only
// once it has died. Signalling the child's pid alone would leave it.
func TestOwnProcessGroupStopsTheWholeGroup(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 60 & echo started; wait")
	cmd.Stdout = w
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	br := bufio.NewReader(r)
	if line, err := br.ReadString('\n'); err != nil || line != "started\n" {
		t.Fatalf("read %q, %v; want the child's first line", line, err)
	}
	cancel()
	cmd.Wait()
	r.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadAll(br); err != nil {
		t.Errorf("the grandchild still held its pipe 30 s after the group was signalled: %v", err)
	}
}
