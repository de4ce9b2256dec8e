package task_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loomrt/loom/task"
)

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// nexts returns the first n times of expr after from.
func nexts(t *testing.T, expr string, from time.Time, n int) []string {
	t.Helper()
	c, err := task.ParseCron(expr)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	at := from
	for range n {
		at = c.Next(at, from.Location())
		out = append(out, at.Format("2006-01-02 15:04:05 MST"))
	}
	return out
}

func TestCronNext(t *testing.T) {
	utc := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // a Thursday
	tests := []struct {
		expr string
		want []string
	}{
		{"*/20 * * * *", []string{"2026-01-01 00:20:00 UTC", "2026-01-01 00:40:00 UTC", "2026-01-01 01:00:00 UTC"}},
		{"*/20 * * * * *", []string{"2026-01-01 00:00:20 UTC", "2026-01-01 00:00:40 UTC", "2026-01-01 00:01:00 UTC"}},
		{"@hourly", []string{"2026-01-01 01:00:00 UTC", "2026-01-01 02:00:00 UTC", "2026-01-01 03:00:00 UTC"}},
		{"@daily", []string{"2026-01-02 00:00:00 UTC", "2026-01-03 00:00:00 UTC", "2026-01-04 00:00:00 UTC"}},
		{"@weekly", []string{"2026-01-04 00:00:00 UTC", "2026-01-11 00:00:00 UTC", "2026-01-18 00:00:00 UTC"}},
		{"@monthly", []string{"2026-02-01 00:00:00 UTC", "2026-03-01 00:00:00 UTC", "2026-04-01 00:00:00 UTC"}},
		{"@yearly", []string{"2027-01-01 00:00:00 UTC", "2028-01-01 00:00:00 UTC", "2029-01-01 00:00:00 UTC"}},
		{"0 9 * * MON-FRI", []string{"2026-01-01 09:00:00 UTC", "2026-01-02 09:00:00 UTC", "2026-01-05 09:00:00 UTC"}},
		{"0 0 L * *", []string{"2026-01-31 00:00:00 UTC", "2026-02-28 00:00:00 UTC", "2026-03-31 00:00:00 UTC"}},
		{"0 0 L 2 *", []string{"2026-02-28 00:00:00 UTC", "2027-02-28 00:00:00 UTC", "2028-02-29 00:00:00 UTC"}},
		// The weekday nearest the 1st stays in the month: Monday 2 Feb, not Friday 30 Jan.
		{"0 0 1W * *", []string{"2026-02-02 00:00:00 UTC", "2026-03-02 00:00:00 UTC", "2026-04-01 00:00:00 UTC"}},
		{"0 0 15W * *", []string{"2026-01-15 00:00:00 UTC", "2026-02-16 00:00:00 UTC", "2026-03-16 00:00:00 UTC"}},
		{"0 0 * * 5L", []string{"2026-01-30 00:00:00 UTC", "2026-02-27 00:00:00 UTC", "2026-03-27 00:00:00 UTC"}},
		{"0 0 * * 1#2", []string{"2026-01-12 00:00:00 UTC", "2026-02-09 00:00:00 UTC", "2026-03-09 00:00:00 UTC"}},
		{"0 0 29 2 *", []string{"2028-02-29 00:00:00 UTC", "2032-02-29 00:00:00 UTC", "2036-02-29 00:00:00 UTC"}},
		{"30 4 1,15 jan,jul *", []string{"2026-01-01 04:30:00 UTC", "2026-01-15 04:30:00 UTC", "2026-07-01 04:30:00 UTC"}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got := nexts(t, tt.expr, utc, len(tt.want))
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("got %v; want %v", got, tt.want)
			}
		})
	}
}

// TestCronDaylightSaving checks ISC cron's rule on the change days of New
// York (2026-03-08, 2026-11-01, at 2:00) and Berlin (2026-03-29 at 2:00,
// 2026-10-25 at 3:00).
func TestCronDaylightSaving(t *testing.T) {
	ny, berlin := mustZone(t, "America/New_York"), mustZone(t, "Europe/Berlin")
	tests := []struct {
		name string
		expr string
		from time.Time
		want []string
	}{
		// Spring forward: 2:30 does not exist; the job runs once, at the jump (3:00 new time).
		{"ny spring fixed", "30 2 * * *", time.Date(2026, 3, 7, 12, 0, 0, 0, ny),
			[]string{"2026-03-08 03:00:00 EDT", "2026-03-09 02:30:00 EDT"}},
		{"berlin spring fixed", "30 2 * * *", time.Date(2026, 3, 28, 12, 0, 0, 0, berlin),
			[]string{"2026-03-29 03:00:00 CEST", "2026-03-30 02:30:00 CEST"}},
		// Every minute of the skipped hour maps to the jump: still one run.
		{"ny spring several skipped", "0,20,40 2 * * *", time.Date(2026, 3, 8, 1, 0, 0, 0, ny),
			[]string{"2026-03-08 03:00:00 EDT", "2026-03-09 02:00:00 EDT"}},
		// Fall back: 1:30 happens twice in New York; the job runs the first time only.
		{"ny fall fixed", "30 1 * * *", time.Date(2026, 10, 31, 12, 0, 0, 0, ny),
			[]string{"2026-11-01 01:30:00 EDT", "2026-11-02 01:30:00 EST"}},
		{"berlin fall fixed", "30 2 * * *", time.Date(2026, 10, 24, 12, 0, 0, 0, berlin),
			[]string{"2026-10-25 02:30:00 CEST", "2026-10-26 02:30:00 CET"}},
		// Started during the second 1:xx hour, after the first 1:30: not again that day.
		{"ny fall fixed from the repeat", "30 1 * * *", time.Date(2026, 11, 1, 6, 10, 0, 0, time.UTC).In(ny),
			[]string{"2026-11-02 01:30:00 EST"}},
		// Hourly follows the clock: no run in the skipped hour, two in the repeated one.
		{"ny spring hourly", "0 * * * *", time.Date(2026, 3, 8, 0, 30, 0, 0, ny),
			[]string{"2026-03-08 01:00:00 EST", "2026-03-08 03:00:00 EDT", "2026-03-08 04:00:00 EDT"}},
		{"ny fall hourly", "0 * * * *", time.Date(2026, 11, 1, 0, 30, 0, 0, ny),
			[]string{"2026-11-01 01:00:00 EDT", "2026-11-01 01:00:00 EST", "2026-11-01 02:00:00 EST"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nexts(t, tt.expr, tt.from, len(tt.want))
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("got %v; want %v", got, tt.want)
			}
		})
	}
}

// TestCronEvery15MinutesAcrossChanges: "every 15 minutes" stays 15 real
// minutes apart through both changes, in both zones, and no run repeats.
func TestCronEvery15MinutesAcrossChanges(t *testing.T) {
	days := []struct {
		zone string
		day  time.Time // midnight UTC of the change day
		runs int       // in the 24 hours of the local day
	}{
		{"America/New_York", time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC), 23 * 4},
		{"America/New_York", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 25 * 4},
		{"Europe/Berlin", time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC), 23 * 4},
		{"Europe/Berlin", time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), 25 * 4},
	}
	c, err := task.ParseCron("*/15 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range days {
		loc := mustZone(t, d.zone)
		start := time.Date(d.day.Year(), d.day.Month(), d.day.Day(), 0, 0, 0, 0, loc)
		end := start.AddDate(0, 0, 1)
		prev, runs := start, 0
		for at := c.Next(start, loc); at.Before(end); at = c.Next(at, loc) {
			if gap := at.Sub(prev); gap != 15*time.Minute {
				t.Errorf("%s %s: %v after %v; want 15m", d.zone, at, gap, prev)
			}
			prev, runs = at, runs+1
		}
		if runs+1 != d.runs { // the run at midnight itself is not after start
			t.Errorf("%s %s: got %d runs; want %d", d.zone, d.day.Format("2006-01-02"), runs+1, d.runs)
		}
	}
}

func TestParseCronErrors(t *testing.T) {
	tests := []struct {
		expr string
		want string // in the message: the field and its value
	}{
		{"", "got 0 fields"},
		{"* * * *", "got 4 fields"},
		{"* * * * * * *", "got 7 fields"},
		{"60 * * * *", `minute "60"`},
		{"59 * * * *", ""}, // the edge: valid
		{"* 24 * * *", `hour "24"`},
		{"* * 0 * *", `day of month "0"`},
		{"* * 32 * *", `day of month "32"`},
		{"* * * 13 *", `month "13"`},
		{"* * * * 8", `day of week "8"`},
		{"* * * * 7", ""}, // Sunday, the edge
		{"60 * * * * *", `second "60"`},
		{"*/0 * * * *", `minute "*/0"`},
		{"5-3 * * * *", `minute "5-3"`},
		{"1,,2 * * * *", `minute "1,,2"`},
		{"1-2-3 * * * *", `minute "1-2-3"`},
		{"1/2/3 * * * *", `minute "1/2/3"`},
		{"* * 1L * *", `day of month "1L"`},
		{"* * * * 5W", `day of week "5W"`},
		{"* * * * 1#2#3", `day of week "1#2#3"`},
		{"x * * * *", `minute "X"`},
		{"* * L * *", ""},
		{"* L * * *", `hour "L"`},
		{"* * * * 1#0", `day of week "1#0"`},
		{"* * * FOO *", `month "FOO"`},
		{"@often", `unknown descriptor "@OFTEN"`},
		{"0 0 30 2 *", "matches no time"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := task.ParseCron(tt.expr)
			if tt.want == "" {
				if err != nil {
					t.Errorf("got %v; want nil", err)
				}
				return
			}
			if !errors.Is(err, task.ErrCron) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want ErrCron naming %s", err, tt.want)
			}
		})
	}
}

// FuzzParseCron: ParseCron never panics, its errors wrap ErrCron, and a
// schedule it accepts gives times that move forward, in UTC and across New
// York's spring change.
func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"* * * * *", "*/15 * * * *", "0 0 L * *", "0 0 15W * *", "0 0 * * 5L", "0 0 * * 1#2", "@daily", "30 2 * * *", "0 0 29 2 *", "1-5/2 * * * * *", "0 12 * JAN-MAR MON", "L W # ? * *"} {
		f.Add(s)
	}
	from := time.Date(2026, 3, 7, 23, 0, 0, 0, time.UTC)
	ny := mustZone(f, "America/New_York")
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := task.ParseCron(expr)
		if err != nil {
			if !errors.Is(err, task.ErrCron) {
				t.Fatalf("%q: error %v does not wrap ErrCron", expr, err)
			}
			return
		}
		for _, loc := range []*time.Location{time.UTC, ny} {
			at := from
			for range 3 {
				next := c.Next(at, loc)
				if next.IsZero() {
					break
				}
				if !next.After(at) {
					t.Fatalf("%q in %v: Next(%v) = %v, not after", expr, loc, at, next)
				}
				at = next
			}
		}
	})
}
