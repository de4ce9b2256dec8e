// Command actors is a small service whose work runs on actors: CPU work
// (GET /hash) on actors of the pool dispatcher, a call that blocks its OS
// thread (GET /lookup, standing in for a cgo database driver) on actors of
// the blocking dispatcher, so that the slow calls cannot take the workers
// the hashing needs. Each dispatcher is switched by its own variable.
//
//	go run ./examples/actors
//	curl '127.0.0.1:8080/hash?text=loom&rounds=1000'
//	curl '127.0.0.1:8080/lookup?key=answer'
//	LOOM_EXECUTOR_POOL=virtual LOOM_EXECUTOR_BLOCKING=threads:4 go run ./examples/actors
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loomrt/loom/actor"
	"github.com/loomrt/loom/web"
	"golang.org/x/sys/unix"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "actors:", err)
		os.Exit(1)
	}
}

// run serves the app until ctx ends, then stops the actors.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("actors", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:8080", "listen address")
	delay := flags.Duration("delay", 20*time.Millisecond, "how long each lookup blocks its OS thread")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	if *delay < 0 {
		return fmt.Errorf("-delay %v: must not be negative", *delay)
	}
	svc, err := newService(*delay)
	if err != nil {
		return err
	}
	serveErr := svc.app.ListenAndServe(ctx, *addr)
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(serveErr, svc.actors.Shutdown(shutdown))
}

// service is the app and the actors behind its routes.
type service struct {
	app     *web.App
	actors  *actor.System
	hashers *group
	lookups *group
}

// Messages.
type (
	// hashRequest asks for SHA-256 applied rounds times to text.
	hashRequest struct {
		text   string
		rounds int
	}
	// lookupRequest asks for the value of key.
	lookupRequest struct{ key string }
)

// maxRounds bounds the CPU one request may ask for.
const maxRounds = 1_000_000

func newService(delay time.Duration) (*service, error) {
	sys, err := actor.NewSystem()
	if err != nil {
		return nil, err
	}
	hashers, err := spawnGroup(sys, "hasher", "pool", runtime.GOMAXPROCS(0), func() actor.Actor { return hasher{} })
	if err != nil {
		return nil, errors.Join(err, sys.Shutdown(context.Background()))
	}
	lookups, err := spawnGroup(sys, "lookup", "blocking", 16, func() actor.Actor { return &store{delay: delay} })
	if err != nil {
		return nil, errors.Join(err, sys.Shutdown(context.Background()))
	}
	app, err := web.New()
	if err != nil {
		return nil, errors.Join(err, sys.Shutdown(context.Background()))
	}
	s := &service{app: app, actors: sys, hashers: hashers, lookups: lookups}
	app.Get("/hash", s.hash)
	app.Get("/lookup", s.lookup)
	return s, nil
}

func (s *service) hash(w http.ResponseWriter, r *http.Request) error {
	rounds, err := web.Query(r, "rounds").IntOr(1)
	if err != nil {
		return err
	}
	if rounds < 1 || rounds > maxRounds {
		return web.Errorf(http.StatusBadRequest, "rounds: %d is not between 1 and %d", rounds, maxRounds)
	}
	sum, err := actor.Ask[string](r.Context(), s.hashers.next(), &hashRequest{text: web.Query(r, "text").String(), rounds: rounds})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, sum)
	return err
}

func (s *service) lookup(w http.ResponseWriter, r *http.Request) error {
	key, err := web.Query(r, "key").Required()
	if err != nil {
		return err
	}
	value, err := actor.Ask[string](r.Context(), s.lookups.next(), &lookupRequest{key: key})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, value)
	return err
}

// hasher does CPU work: it belongs on the pool dispatcher.
type hasher struct{}

func (hasher) Receive(c *actor.Context, msg any) {
	if m, ok := msg.(*hashRequest); ok {
		sum := sha256.Sum256([]byte(m.text))
		for range m.rounds - 1 {
			sum = sha256.Sum256(sum[:])
		}
		c.Respond(hex.EncodeToString(sum[:]))
	}
}

// store answers lookups with a call that holds its OS thread for delay, as
// a cgo driver would: it belongs on the blocking dispatcher.
type store struct{ delay time.Duration }

func (s *store) Receive(c *actor.Context, msg any) {
	if m, ok := msg.(*lookupRequest); ok {
		ts := unix.NsecToTimespec(s.delay.Nanoseconds())
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
		c.Respond("value of " + m.key)
	}
}

// group is a fixed set of identical actors that take requests in turn.
type group struct {
	refs []actor.Ref
	n    atomic.Uint64
}

func spawnGroup(sys *actor.System, name, dispatcher string, size int, newActor func() actor.Actor) (*group, error) {
	g := &group{}
	for i := range size {
		r, err := sys.Spawn(actor.Props{Name: fmt.Sprintf("%s-%d", name, i), Dispatcher: dispatcher, New: newActor})
		if err != nil {
			return nil, err
		}
		g.refs = append(g.refs, r)
	}
	return g, nil
}

func (g *group) next() actor.Ref {
	return g.refs[g.n.Add(1)%uint64(len(g.refs))]
}
