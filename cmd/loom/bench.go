package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/loomrt/loom/bench"
)

// benchFlags are the options of `loom bench`.
type benchFlags struct {
	quick  bool
	rounds int
	seed   uint64
	models string
	list   bool
	out    string
	peers  bool
}

// newBenchCmd builds `loom bench` and its `compare` subcommand.
func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench [scenario...]",
		Short: "Run the benchmark scenarios under each execution model",
		Long: "Run the scenarios of the seeds' experiments, each server under test in its own process,\n" +
			"under each execution model, and report throughput against the scenario's limit, latency,\n" +
			"memory, OS threads and goroutines. With no scenario named, run them all.",
		Example: "  loom bench --quick\n  loom bench cask-sleep spring-500ms --models virtual,pool:16\n" +
			"  loom bench --out results/\n  loom bench compare old/results.json new/results.json",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd.Context(), cmd, f, args)
		},
	}
	cmd.Flags().BoolVar(&f.quick, "quick", false, "run a short version of every scenario (under 2 minutes on 2 cores)")
	cmd.Flags().IntVar(&f.rounds, "rounds", 0, fmt.Sprintf("run every model this many times per scenario, in an order shuffled per round; "+
		"a difference needs %d rounds to be called at all (default %d, %d with --quick)", bench.MinRounds(), bench.DefaultRounds, bench.DefaultQuickRounds))
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "seed of the rounds' orders, to run them again in the same order (default: from the clock; the report prints it)")
	cmd.Flags().StringVar(&f.models, "models", "", "execution models to compare, e.g. virtual,nbio/pool:16,limit:1000,queue=100; a model runs on net/http unless it names the engine nbio/ (default: each scenario's)")
	cmd.Flags().BoolVar(&f.list, "list", false, "list the scenarios with their load and limit, and exit")
	cmd.Flags().StringVar(&f.out, "out", "", "write results.json, report.md and report.html into this directory")
	cmd.Flags().BoolVar(&f.peers, "peers", true, "also run peers (bench/peers: net/http, chi, gin, echo; protoactor-go, hollywood for actor-echo) where the source tree is present; "+
		"beside --models, only when given, or name them there (peer:gin)")
	cmd.AddCommand(newBenchCompareCmd(), newBenchReportCmd(), newBenchRemoteEchoCmd())
	return cmd
}

func runBench(ctx context.Context, cmd *cobra.Command, f benchFlags, names []string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := checkBenchFlags(f, names, cmd.Flags().Changed); err != nil {
		return err
	}
	if f.list {
		return listScenarios(stdout, f.quick, f.rounds)
	}
	if f.out != "" {
		// Before the first run, not after the last: a bad --out must not
		// cost minutes of runs and their results.
		created, err := bench.PrepareDir(f.out)
		if err != nil {
			return fmt.Errorf("--out %s: %w", f.out, err)
		}
		if created {
			defer func() { // nothing written (a bad selection): leave no empty directory
				if entries, err := os.ReadDir(f.out); err == nil && len(entries) == 0 {
					os.Remove(f.out)
				}
			}()
		}
	}
	opts := bench.Options{
		Scenarios: names,
		Models:    bench.SplitModels(f.models),
		Quick:     f.quick,
		Rounds:    f.rounds,
		Seed:      f.seed,
		Progress:  stderr,
		Terminal:  isTerminal(stderr),
		Command:   "loom " + strings.Join(os.Args[1:], " "),
	}
	build, demanded, err := wantsPeers(names, opts.Models, f.peers, cmd.Flags().Changed("peers"))
	if err != nil {
		return err
	}
	if build {
		path, cleanup, err := buildPeers(ctx, stderr)
		switch {
		case err == nil:
			defer cleanup()
			opts.PeerServer = path
		case demanded:
			return err
		default:
			opts.Notes = append(opts.Notes, "peer frameworks skipped: "+err.Error())
		}
	}
	started := time.Now()
	report, err := bench.Run(ctx, opts)
	if report == nil {
		return err
	}
	// The files first: minutes of measurements must not depend on stdout.
	var paths []string
	if f.out != "" {
		var werr error
		if paths, werr = saveReport(f.out, report); werr != nil {
			return werr
		}
	}
	fmt.Fprintln(stdout)
	if werr := bench.WriteText(stdout, report); werr != nil {
		return werr
	}
	if len(paths) > 0 {
		fmt.Fprintf(stdout, "\nwrote %s\n", strings.Join(paths, ", "))
	}
	fmt.Fprintf(stdout, "\nbench took %s\n", time.Since(started).Round(100*time.Millisecond))
	return err
}

// saveReport writes the report files into dir. Should that fail even so
// (dir checked before the run, then removed or filled up), it saves
// results.json in the temporary directory, and its error says where.
func saveReport(dir string, report *bench.Report) ([]string, error) {
	paths, err := bench.WriteFiles(dir, report)
	if err == nil {
		return paths, nil
	}
	rescue, terr := os.CreateTemp("", "loom-bench-results-*.json")
	if terr != nil {
		return paths, errors.Join(err, fmt.Errorf("results not saved elsewhere either: %w", terr))
	}
	if terr := errors.Join(bench.WriteJSON(rescue, report), rescue.Close()); terr != nil {
		return paths, errors.Join(err, fmt.Errorf("results not saved elsewhere either: %w", terr))
	}
	return paths, fmt.Errorf("%w (results saved to %s; loom bench report %s --out DIR writes the reports)", err, rescue.Name(), rescue.Name())
}

// checkBenchFlags refuses flag values that would otherwise mean something
// other than what was typed: --models ',' (every scenario's own models),
// an empty --out (no files), --list with a selection it ignores.
func checkBenchFlags(f benchFlags, names []string, changed func(string) bool) error {
	if changed("models") {
		for i, m := range strings.Split(f.models, ",") {
			if strings.TrimSpace(m) == "" {
				return fmt.Errorf("--models %q: model %d is empty", f.models, i+1)
			}
		}
	}
	if changed("rounds") && f.rounds < 1 {
		return fmt.Errorf("--rounds %d: want 1 or more", f.rounds)
	}
	if changed("seed") && f.seed == 0 {
		return errors.New("--seed 0: want a seed other than 0, or leave the flag out")
	}
	if changed("out") && f.out == "" {
		return errors.New(`--out "": want a directory, or leave the flag out`)
	}
	if f.list && (len(names) > 0 || changed("models") || changed("out") || changed("seed")) {
		return errors.New("--list prints the catalogue and runs nothing: drop the scenarios, --models, --seed and --out")
	}
	if !f.peers {
		for _, m := range bench.SplitModels(f.models) {
			if bench.IsPeer(m) {
				return fmt.Errorf("--peers=false, but --models names %s: drop one of them", m)
			}
		}
	}
	return nil
}

// wantsPeers decides whether to build bench/peers' peer-server, by the
// rule of bench.Run for peers (they join each scenario's models unless the
// models name one): a peer named in models needs it; --peers given
// (explicit) adds each selected scenario's peers, and is an error when none
// of them has any; with neither, peers run beside each scenario's own
// models only, so --models without a peer runs none. demanded says that a
// failed build is an error rather than a note.
func wantsPeers(names, models []string, peers, explicit bool) (build, demanded bool, err error) {
	if slices.ContainsFunc(models, bench.IsPeer) {
		return true, true, nil
	}
	if !peers {
		return false, false, nil
	}
	selected := bench.Catalogue()
	if len(names) > 0 {
		selected = nil
		for _, n := range names {
			s, err := bench.Lookup(bench.Catalogue(), n)
			if err != nil {
				return false, false, err
			}
			selected = append(selected, s)
		}
	}
	hasPeers := slices.ContainsFunc(selected, func(s *bench.Scenario) bool { return s.Peer != "" })
	switch {
	case explicit && !hasPeers:
		return false, false, fmt.Errorf("--peers: no peer framework serves %s", strings.Join(names, ", "))
	case explicit:
		return true, true, nil
	case len(models) > 0:
		return false, false, nil
	}
	return hasPeers, false, nil
}

// buildPeers builds bench/peers' peer-server into a temporary directory.
func buildPeers(ctx context.Context, progress io.Writer) (path string, cleanup func(), err error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", nil, err
	}
	src, err := bench.FindPeers(wd)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "loom-peers-*")
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(progress, "building peer-server from %s …\n", src)
	path, err = bench.BuildPeers(ctx, src, dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return path, func() { os.RemoveAll(dir) }, nil
}

// listScenarios prints the catalogue's plans, and what a run of each
// costs with its default rounds, peers included.
func listScenarios(w io.Writer, quick bool, rounds int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tconnections\trequests\twarm-up\tduration\trounds\truns\tabout\tlimit\tmodels")
	var total time.Duration
	var totalRuns int
	for _, s := range bench.Catalogue() {
		p := s.Quick
		if !quick {
			p = s.Full
		}
		requests := "–"
		if p.Requests > 0 {
			requests = fmt.Sprint(p.Requests)
		}
		models := strings.Join(p.Models, " ")
		if s.Peer != "" {
			models += " + peers"
		}
		conns := fmt.Sprint(p.Connections)
		if p.Idle > 0 {
			conns += fmt.Sprintf(" + %d idle", p.Idle)
		}
		warmup := "–"
		if p.Warmup > 0 {
			warmup = p.Warmup.String()
		}
		opts := bench.Options{Scenarios: []string{s.Name}, Quick: quick, Rounds: rounds, PeerServer: "peer-server"}
		runs, about, err := bench.Estimate(opts)
		if err != nil {
			return err
		}
		n := rounds
		if n == 0 {
			n = bench.DefaultRounds
			if quick {
				n = bench.DefaultQuickRounds
			}
			if p.Rounds > 0 {
				n = p.Rounds
			}
		}
		total += about
		totalRuns += runs
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", s.Name, conns, requests, warmup, p.Duration, n, runs,
			about.Round(time.Second), s.Limit(p).Formula, models)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d runs, about %s from the plans' windows and %s to start and stop each server "+
		"(peers included; the first run also builds the tool and the peers)\n", totalRuns, total.Round(time.Second), bench.RunOverhead)
	return err
}

func newBenchCompareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compare old.json new.json",
		Short: "Compare two results.json files scenario by scenario",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			old, err := bench.ReadJSONFile(args[0])
			if err != nil {
				return err
			}
			cur, err := bench.ReadJSONFile(args[1])
			if err != nil {
				return err
			}
			regressions, err := bench.WriteComparison(cmd.OutOrStdout(), bench.Compare(old, cur))
			if err != nil {
				return err
			}
			if regressions > 0 {
				return fmt.Errorf("%w: %d (ok before and not now, or significantly below %.0f%% of the old throughput at α = %.2f)",
					errRegression, regressions, bench.Regression*100, bench.Alpha)
			}
			return nil
		},
	}
}

func newBenchReportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report results.json",
		Short: "Print the report of a results.json again, and rewrite report.md and report.html",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("out") && out == "" {
				return errors.New(`--out "": want a directory, or leave the flag out`)
			}
			report, err := bench.ReadJSONFile(args[0])
			if err != nil {
				return err
			}
			if err := bench.WriteText(cmd.OutOrStdout(), report); err != nil {
				return err
			}
			if out == "" {
				return nil
			}
			paths, err := bench.WriteFiles(out, report)
			if err == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "\nwrote %s\n", strings.Join(paths, ", "))
			}
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write results.json, report.md and report.html into this directory")
	return cmd
}

// errRegression makes `loom bench compare` exit non-zero on a regression, so
// that CI can use it.
var errRegression = errors.New("regressions")

// isTerminal reports whether w is a terminal, where progress lines are
// redrawn in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
