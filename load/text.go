package load

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// WriteText writes a wrk-like summary of r to w.
func (r *Result) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	switch r.Mode {
	case Open:
		fmt.Fprintf(b, "Open loop at %s, %s, up to %d connections used\n", r.describeRate(), formatElapsed(r.Elapsed), r.Connections)
	default:
		if r.Pipeline > 1 {
			fmt.Fprintf(b, "Closed loop, %d connections pipelining %d requests each, %s\n", r.Connections, r.Pipeline, formatElapsed(r.Elapsed))
			break
		}
		fmt.Fprintf(b, "Closed loop, %d connections, %s\n", r.Connections, formatElapsed(r.Elapsed))
	}
	for _, t := range r.Targets {
		fmt.Fprintf(b, "  @ %s\n", t)
	}
	if r.Requests == 0 {
		fmt.Fprintf(b, "  Latency   (no request served)\n")
	} else {
		r.writeLatency(b)
	}
	fmt.Fprintf(b, "  %d requests in %s, %s read (%d sent, %d connections opened, %d reconnects)\n",
		r.Requests, formatElapsed(r.Elapsed), formatBytes(float64(r.Bytes)), r.Sent, r.Connects, r.Reconnects)
	if e := r.Errors; e.Total() > 0 {
		fmt.Fprintf(b, "  Errors: connect %d, refused %d, timeout %d, read %d, write %d, reset %d, closed %d, status %d, body %d, timeout unsent %d\n",
			e.Connect, e.Refused, e.Timeout, e.Read, e.Write, e.Reset, e.Closed, e.Status, e.Body, e.TimeoutUnsent)
	}
	if len(r.Status) > 0 {
		codes := make([]int, 0, len(r.Status))
		for c := range r.Status {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		parts := make([]string, len(codes))
		for i, c := range codes {
			parts[i] = fmt.Sprintf("%d × %d", r.Status[c], c)
		}
		fmt.Fprintf(b, "  Status codes: %s\n", strings.Join(parts, ", "))
	}
	if r.Non2xx > 0 {
		fmt.Fprintf(b, "  Non-2xx responses: %d\n", r.Non2xx)
	}
	if r.Mode == Open {
		fmt.Fprintf(b, "  Schedule: %d requests due, %d late (started over %s behind schedule, or never)\n", r.Scheduled, r.Late, LateAfter)
	}
	for _, note := range r.Limits {
		fmt.Fprintf(b, "  Limit: %s\n", note)
	}
	fmt.Fprintf(b, "Requests/sec: %12.2f\n", r.RequestsPerSec)
	perSec := 0.0
	if r.Elapsed > 0 {
		perSec = float64(r.Bytes) / r.Elapsed.Seconds()
	}
	fmt.Fprintf(b, "Transfer/sec: %12s\n", formatBytes(perSec))
	return b.Flush()
}

// formatLatency prints d in the unit wrk would use, with two decimals.
func formatLatency(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.2fus", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%.2fm", d.Minutes())
}

func formatElapsed(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}

func formatBytes(n float64) string {
	units := []string{"B", "KB", "MB", "GB", "TB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return fmt.Sprintf("%.2f%s", n, units[i])
}

func (r *Result) writeLatency(b *bufio.Writer) {
	l := r.Latency
	fmt.Fprintf(b, "  Latency   mean %s   stdev %s   max %s\n", formatLatency(l.Mean), formatLatency(l.Stdev), formatLatency(l.Max))
	if r.Mode == Open {
		fmt.Fprintf(b, "  Latency distribution (from the scheduled send time)\n")
	} else {
		fmt.Fprintf(b, "  Latency distribution\n")
	}
	for _, row := range []struct {
		name string
		v    time.Duration
	}{
		{"min", l.Min}, {"50%", l.P50}, {"75%", l.P75}, {"90%", l.P90}, {"99%", l.P99},
		{"99.9%", l.P999}, {"99.99%", l.P9999}, {"max", l.Max},
	} {
		fmt.Fprintf(b, "    %6s  %10s\n", row.name, formatLatency(row.v))
	}
}

// describeRate says what an open loop offered: "500 req/s", or for phases
// "500 req/s for 5s, then 2000 req/s for 5s (mean 1250 req/s)".
func (r *Result) describeRate() string {
	if len(r.Phases) == 0 {
		return fmt.Sprintf("%g req/s", r.Rate)
	}
	parts := make([]string, len(r.Phases))
	for i, p := range r.Phases {
		parts[i] = fmt.Sprintf("%g req/s for %s", p.Rate, p.Duration)
	}
	return fmt.Sprintf("%s (mean %.4g req/s)", strings.Join(parts, ", then "), r.Rate)
}
