package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteText writes the report for a terminal: per scenario, its load and
// limit, a table of the models and the verdict.
func WriteText(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "loom bench on %s\n", r.Machine)
	if line := roundsLine(r); line != "" {
		fmt.Fprintln(ew, line)
	}
	for _, note := range r.Notes {
		fmt.Fprintf(ew, "note: %s\n", note)
	}
	for _, sc := range r.Scenarios {
		fmt.Fprintf(ew, "\n== %s: %s\n", sc.Name, sc.Workload)
		fmt.Fprintf(ew, "   load: %s; limit: %s\n", describePlan(sc.Plan), sc.Limit.Formula)
		rows := [][]string{tableHeader(false, sc.Unit)}
		for _, run := range sc.Runs {
			rows = append(rows, tableRow(run, false, sc.Unit))
		}
		writeTable(ew, "", rows)
		if idle := idleTable(sc.Runs); idle != nil {
			fmt.Fprintln(ew, "   idle connections:")
			writeTable(ew, "", idle)
			for _, note := range idleNotes(sc.Runs) {
				fmt.Fprintf(ew, "   note: %s\n", note)
			}
		}
		if db := databaseTable(sc.Runs); db != nil {
			fmt.Fprintln(ew, "   database:")
			writeTable(ew, "", db)
		}
		if steps := stepRows(sc); steps != nil {
			fmt.Fprintf(ew, "   %s\n", stepDefinition)
			writeTable(ew, "   ", steps)
		}
		for _, run := range sc.Runs {
			if run.Status == StatusCrashed && len(run.Stderr) > 0 {
				fmt.Fprintf(ew, "   %s stderr (last lines):\n", run.Model)
				for _, line := range lastN(run.Stderr, 5) {
					fmt.Fprintf(ew, "     | %s\n", line)
				}
			}
		}
		if note := unloadedNote(sc); note != "" {
			fmt.Fprintf(ew, "   %s\n", note)
		}
		fmt.Fprintf(ew, "   verdict: %s\n", sc.Verdict)
	}
	return ew.err
}

// roundsLine says how the figures were taken and judged: "5 rounds a
// model, in an order shuffled per round (seed 42); figures are medians over
// the rounds, with their range; a model beats another only at p ≤ 0.05
// (Mann-Whitney U)". Empty for reports of before rounds.
func roundsLine(r *Report) string {
	if r.Seed == 0 {
		return ""
	}
	rounds := fmt.Sprintf("%d rounds a model", r.Rounds)
	if r.Rounds == 1 {
		rounds = "one round a model, so no difference can be called"
	}
	return fmt.Sprintf("%s, in an order shuffled per round (--seed %d); figures are medians over the rounds, with their range; "+
		"a model beats another only at p ≤ %.2f (Mann-Whitney U), and ties (~) otherwise", rounds, r.Seed, r.Alpha)
}

// describePlan says what load a plan applies: "100 connections, 15s".
func describePlan(p Plan) string {
	parts := []string{count(int64(p.Connections)) + " connections"}
	if p.Idle > 0 {
		parts[0] += " beside " + count(int64(p.Idle)) + " idle"
	}
	if p.Pipeline > 1 {
		parts[0] += " pipelining " + strconv.Itoa(p.Pipeline) + " requests each"
	}
	switch {
	case len(p.Phases) > 0:
		var phases []string
		for _, ph := range p.Phases {
			phases = append(phases, count(int64(ph.Rate))+" req/s for "+ph.Duration.String())
		}
		return "open loop at " + strings.Join(phases, ", then ")
	case p.Rate > 0:
		parts = []string{"open loop at " + count(int64(p.Rate)) + " req/s"}
	}
	if p.Requests > 0 {
		parts = append(parts, count(p.Requests)+" requests")
	}
	if p.Duration > 0 {
		what := "for " + p.Duration.String()
		if p.Requests > 0 {
			what = "at most " + p.Duration.String()
		}
		parts = append(parts, what)
	}
	if p.MaxThreads > 0 {
		parts = append(parts, "server thread limit "+count(int64(p.MaxThreads)))
	}
	if p.Warmup > 0 {
		parts = append(parts, "after a "+p.Warmup.String()+" warm-up")
	}
	return strings.Join(parts, ", ")
}

func lastN(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

// errWriter remembers the first write error, so that a report is written
// with plain Fprintf calls and checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
