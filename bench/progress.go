package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/loomrt/loom/load"
)

// RunOverhead is what starting and stopping a server adds to each run, for
// the estimate of the time left: about 0.2 s on a busy 2-core machine.
const RunOverhead = 250 * time.Millisecond

// progress prints one line per run. On a terminal it redraws the line with
// a bar while the run lasts; elsewhere it prints the line when the run
// ends. It is safe for the load generator's progress goroutine to call
// update while the runner calls begin and end.
type progress struct {
	w        io.Writer
	terminal bool
	total    int
	left     []time.Duration // expected time of the runs from index i on

	mu      sync.Mutex
	index   int
	label   string
	started time.Time
	expect  time.Duration
}

func newProgress(w io.Writer, terminal bool, jobs []job) *progress {
	p := &progress{w: w, terminal: terminal && w != nil, total: len(jobs), left: make([]time.Duration, len(jobs)+1)}
	for i := len(jobs) - 1; i >= 0; i-- {
		p.left[i] = p.left[i+1] + jobs[i].expected + RunOverhead
	}
	return p
}

func (p *progress) begin(i int, j job) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if i == 0 {
		fmt.Fprintf(p.w, "%d runs, about %s\n", p.total, short(p.left[0]))
	}
	p.index, p.started, p.expect = i, time.Now(), j.expected
	p.label = fmt.Sprintf("[%*d/%d] %-13s %-22s", len(fmt.Sprint(p.total)), i+1, p.total, j.scenario.Name, j.model)
	if j.rounds > 1 {
		p.label = fmt.Sprintf("[%*d/%d] %-13s r%d/%d %-22s", len(fmt.Sprint(p.total)), i+1, p.total, j.scenario.Name,
			j.round, j.rounds, j.model)
	}
	if p.terminal {
		p.draw(load.Progress{})
	}
}

// update is Config.Progress: it redraws the bar.
func (p *progress) update(lp load.Progress) {
	if !p.terminal {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(lp)
}

func (p *progress) draw(lp load.Progress) {
	elapsed := time.Since(p.started)
	fraction := 0.0
	if lp.Duration > 0 {
		fraction = lp.Elapsed.Seconds() / lp.Duration.Seconds()
	}
	if lp.Total > 0 {
		fraction = max(fraction, float64(lp.Done)/float64(lp.Total))
	}
	fraction = min(fraction, 1)
	const width = 20
	filled := int(fraction * width)
	bar := strings.Repeat("#", filled) + strings.Repeat("-", width-filled)
	remaining := max(p.expect-elapsed, 0)
	fmt.Fprintf(p.w, "\r\033[K%s [%s] %5.1fs  ~%s left (~%s in all)  %s req  %s err",
		p.label, bar, elapsed.Seconds(), short(remaining), short(remaining+p.left[p.index+1]),
		count(lp.Done), count(lp.Errors))
}

func (p *progress) end(i int, j job, run ModelRun) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := time.Since(p.started)
	prefix := ""
	if p.terminal {
		prefix = "\r\033[K"
	}
	status := string(run.Status)
	if run.Failure != "" && run.Status != StatusOK {
		status += ": " + firstLine(run.Failure, 70)
	}
	fmt.Fprintf(p.w, "%s%s %16s  p99 %-8s %5.1fs  ~%s left  %s\n",
		prefix, p.label, j.scenario.Unit.format(run.Throughput), short(run.LatencyAt(99)), elapsed.Seconds(),
		short(p.left[i+1]), status)
}

// short formats a duration for a progress line: "850ms", "12.3s", "4m05s".
func short(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
