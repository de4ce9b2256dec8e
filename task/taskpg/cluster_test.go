package taskpg_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A cluster is a PostgreSQL server of the test's own, in a temporary
// directory on a free port, that the test stops and starts to take the
// database away from a Locker. The shared server on 5432 is never touched:
// other tests use it.
type cluster struct {
	bin  string // holds initdb and pg_ctl
	dir  string // holds data/, the socket and the log
	port int
	cred *syscall.Credential // the postgres user when run as root; else nil
}

// template is a data directory made once by initdb (seconds on a busy
// machine) and copied for each cluster (milliseconds).
var template struct {
	once sync.Once
	dir  string // holds data/; removed when the tests end (removeTemplate)
	bin  string
	cred *syscall.Credential
	skip string // why no cluster can be made
}

func makeTemplate() {
	bin := serverBin()
	if bin == "" {
		template.skip = "no pg_ctl in PATH or /usr/lib/postgresql/*/bin"
		return
	}
	dir, err := os.MkdirTemp("", "taskpg-template-")
	if err != nil {
		template.skip = err.Error()
		return
	}
	template.dir, template.bin = dir, bin
	if os.Geteuid() == 0 {
		// initdb refuses root: the server runs as postgres.
		u, err := user.Lookup("postgres")
		if err != nil {
			template.skip = fmt.Sprintf("running as root and no postgres user: %v", err)
			return
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			template.skip = err.Error()
			return
		}
		template.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	initdb := runAs(template.cred, filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		template.skip = fmt.Sprintf("initdb: %v\n%s", err, out)
	}
}

// removeTemplate removes the template, if one was made.
func removeTemplate() {
	if template.dir != "" {
		os.RemoveAll(template.dir)
	}
}

// newCluster starts a cluster of its own, stopped and removed when the test
// ends. It skips the test without PostgreSQL's server programs, and fails
// it instead when CI is set.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	template.once.Do(makeTemplate)
	if template.skip != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("a throwaway PostgreSQL cluster cannot be made and CI is set: %s", template.skip)
		}
		t.Skipf("a throwaway PostgreSQL cluster cannot be made: %s", template.skip)
	}
	c := &cluster{bin: template.bin, cred: template.cred}
	dir, err := os.MkdirTemp("", "taskpg-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c.dir = dir
	if c.cred != nil {
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := runAs(c.cred, "cp", "-a", filepath.Join(template.dir, "data"), c.data()).CombinedOutput(); err != nil {
		t.Fatalf("copy the template: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	c.start(t)
	t.Cleanup(func() {
		c.command("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop").Run()
	})
	return c
}

// runAs is exec.Command run as cred's user (nil: this process's).
func runAs(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	return cmd
}

// serverBin returns the directory of pg_ctl: PATH's, else the newest of
// Debian's /usr/lib/postgresql/<version>/bin; "" if none.
func serverBin() string {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p)
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	slices.SortFunc(found, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(a))))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(b))))
		return va - vb
	})
	if len(found) == 0 {
		return ""
	}
	return filepath.Dir(found[len(found)-1])
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *cluster) command(name string, args ...string) *exec.Cmd {
	cmd := runAs(c.cred, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	return cmd
}

// start starts the server and waits until it accepts connections.
func (c *cluster) start(t testing.TB) {
	t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=16MB -c max_connections=40", c.port, c.dir)
	out, err := c.command("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-o", opts, "-t", "120", "-w", "start").CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// stop stops the server as pg_ctlcluster restart does (a fast shutdown):
// sessions are ended with "terminating connection due to administrator
// command" (57P01), then connections are refused until start.
func (c *cluster) stop(t testing.TB) {
	t.Helper()
	if out, err := c.command("pg_ctl", "-D", c.data(), "-m", "fast", "-t", "120", "-w", "stop").CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

func (c *cluster) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// pool returns a pool on the cluster, as one instance of a service has,
// closed when the test ends.
func (c *cluster) pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), c.url())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
