package task

import (
	"testing"
	"time"
)

// FuzzCronNextIsFirstMatch: in UTC, Next returns a time whose fields
// match, and no matching time lies between the start and it (scanned minute
// by minute, or second by second for expressions with seconds, up to 5,000
// steps).
func FuzzCronNextIsFirstMatch(f *testing.F) {
	for _, s := range []string{"* * * * *", "*/7 * * * *", "0 0 L * *", "0 9 15W * *", "0 0 * * 5L", "0 0 * * 1#2", "*/13 * * * * *", "5 4 * * SUN", "0 22 * * 1-5", "@hourly"} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, expr string, offset int64) {
		c, err := ParseCron(expr)
		if err != nil {
			return
		}
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(offset%(400*24*3600)) * time.Second)
		next := c.Next(from, time.UTC)
		if next.IsZero() {
			t.Fatalf("%q: no next time after %v, though ParseCron found one", expr, from)
		}
		m := c.matcher()
		if !m.due(next, 0) {
			t.Fatalf("%q: Next(%v) = %v does not match", expr, from, next)
		}
		step := time.Minute
		if c.segments[0] != "0" {
			step = time.Second
		}
		at := from.Truncate(step).Add(step)
		for i := 0; i < 5000 && at.Before(next); i, at = i+1, at.Add(step) {
			if m.due(at, 0) {
				t.Fatalf("%q: Next(%v) = %v skips %v, which matches", expr, from, next, at)
			}
		}
	})
}
