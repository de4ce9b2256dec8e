package bench

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the report as Markdown, ready to paste into docs: the
// machine, then per scenario its load, limit, a table and the verdict.
func WriteMarkdown(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "Command: `%s`  \n", or(r.Command, "loom bench"))
	fmt.Fprintf(ew, "Machine: %s  \n", r.Machine)
	fmt.Fprintf(ew, "Run: %s, %s\n", r.Started.Format("2006-01-02 15:04 UTC"), short(r.Finished.Sub(r.Started)))
	if line := roundsLine(r); line != "" {
		fmt.Fprintf(ew, "\n%s.\n", strings.ToUpper(line[:1])+line[1:])
	}
	for _, note := range r.Notes {
		fmt.Fprintf(ew, "\n> %s\n", note)
	}
	for _, sc := range r.Scenarios {
		fmt.Fprintf(ew, "\n### %s\n\n", sc.Name)
		fmt.Fprintf(ew, "%s. Load: %s. Limit: %s.\n\n", sc.Workload, describePlan(sc.Plan), sc.Limit.Formula)
		fmt.Fprintf(ew, "| %s |\n", strings.Join(tableHeader(true, sc.Unit), " | "))
		fmt.Fprintf(ew, "|%s\n", strings.Repeat("---|", len(tableHeader(true, sc.Unit))))
		for _, run := range sc.Runs {
			cells := tableRow(run, true, sc.Unit)
			for i, c := range cells {
				cells[i] = strings.ReplaceAll(c, "|", `\|`)
			}
			fmt.Fprintf(ew, "| %s |\n", strings.Join(cells, " | "))
		}
		if idle := idleTable(sc.Runs); idle != nil {
			fmt.Fprintf(ew, "\nIdle connections:\n\n| %s |\n|%s\n", strings.Join(idle[0], " | "), strings.Repeat("---|", len(idle[0])))
			for _, row := range idle[1:] {
				fmt.Fprintf(ew, "| %s |\n", strings.Join(row, " | "))
			}
			for _, note := range idleNotes(sc.Runs) {
				fmt.Fprintf(ew, "\n> %s\n", note)
			}
		}
		if db := databaseTable(sc.Runs); db != nil {
			fmt.Fprintf(ew, "\nDatabase:\n\n")
			writeMarkdownTable(ew, db)
		}
		if steps := stepRows(sc); steps != nil {
			fmt.Fprintf(ew, "\n%s\n\n", stepDefinition)
			writeMarkdownTable(ew, steps)
		}
		if note := unloadedNote(sc); note != "" {
			fmt.Fprintf(ew, "\n%s.\n", note)
		}
		fmt.Fprintf(ew, "\n**Verdict:** %s\n", sc.Verdict)
		for _, run := range sc.Runs {
			if run.Status == StatusCrashed && len(run.Stderr) > 0 {
				fmt.Fprintf(ew, "\n<details><summary>%s: last lines of the server's stderr</summary>\n\n```\n%s\n```\n</details>\n",
					run.Model, strings.Join(lastN(run.Stderr, 8), "\n"))
			}
		}
	}
	return ew.err
}

// writeMarkdownTable writes rows, the first the header, as a Markdown table.
func writeMarkdownTable(w io.Writer, rows [][]string) {
	for i, row := range rows {
		cells := make([]string, len(row))
		for j, c := range row {
			cells[j] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		if i == 0 {
			fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(row)))
		}
	}
}
