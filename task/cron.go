package task

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/adhocore/gronx"
)

// ErrCron is wrapped by every error ParseCron returns.
var ErrCron = errors.New("task: invalid cron expression")

// A CronSchedule is a parsed cron expression: the times whose fields match
// it, in a time zone. It is immutable and safe for concurrent use.
type CronSchedule struct {
	expr     string
	segments []string // second, minute, hour, day of month, month, day of week
	// clock holds, for the second, minute and hour fields, whether each
	// value matches: they do not depend on the date, so they are asked once.
	clock [3][]bool
	// wallClock: a '*' in the minute or hour field. Such a schedule follows
	// the clock through daylight saving changes (ISC cron's rule): times the
	// clock skips do not happen, times it repeats happen twice.
	wallClock bool
}

var fieldNames = [6]string{"second", "minute", "hour", "day of month", "month", "day of week"}

// fieldChars are the characters each field may hold besides digits.
var fieldChars = [6]string{"*,-/", "*,-/", "*,-/", "*,-/?LW", "*,-/", "*,-/?L#"}

// listItem is the grammar of one item of a field's list: a value, a range or
// '*', with a step; the day fields also take their special forms.
var listItem = [6]*regexp.Regexp{
	regexp.MustCompile(`^(\*|\d+(-\d+)?)(/\d+)?$`),
	regexp.MustCompile(`^(\*|\d+(-\d+)?)(/\d+)?$`),
	regexp.MustCompile(`^(\*|\d+(-\d+)?)(/\d+)?$`),
	regexp.MustCompile(`^((\*|\d+(-\d+)?)(/\d+)?|\?|L|\d+W)$`),
	regexp.MustCompile(`^(\*|\d+(-\d+)?)(/\d+)?$`),
	regexp.MustCompile(`^((\*|\d+(-\d+)?)(/\d+)?|\?|\d+L|\d+#\d+)$`),
}

var descriptors = map[string]string{
	"@yearly":   "0 0 0 1 1 *",
	"@annually": "0 0 0 1 1 *",
	"@monthly":  "0 0 0 1 * *",
	"@weekly":   "0 0 0 * * 0",
	"@daily":    "0 0 0 * * *",
	"@midnight": "0 0 0 * * *",
	"@hourly":   "0 0 * * * *",
}

var (
	monthNames = strings.NewReplacer("JAN", "1", "FEB", "2", "MAR", "3", "APR", "4", "MAY", "5", "JUN", "6",
		"JUL", "7", "AUG", "8", "SEP", "9", "OCT", "10", "NOV", "11", "DEC", "12")
	dayNames = strings.NewReplacer("SUN", "0", "MON", "1", "TUE", "2", "WED", "3", "THU", "4", "FRI", "5", "SAT", "6")
)

// searchYears bounds the search for the next matching time: long enough for
// February 29th on a given weekday, short enough to end quickly for an
// expression that never matches.
const searchYears = 30

// ParseCron parses a cron expression: five fields (minute, hour, day of
// month, month, day of week), or six with seconds first, or one of @yearly,
// @annually, @monthly, @weekly, @daily, @midnight, @hourly. Fields take
// numbers, '*', lists, ranges and steps; months and days of the week take
// names (JAN, MON); day of month takes L (last day) and nW (nearest
// weekday); day of week takes nL (last such day) and n#k (k-th such day).
// When both day fields are restricted, a day matching either matches.
//
// Matching is the gronx library's; ParseCron checks every field against
// every value it can meet, so a bad expression is an error (wrapping
// ErrCron) naming the field and its value, never a schedule that fails
// later. An expression that matches no time in 30 years is an error too.
func ParseCron(expr string) (*CronSchedule, error) {
	fields := strings.Fields(strings.ToUpper(expr))
	if len(fields) == 1 && strings.HasPrefix(fields[0], "@") {
		d, ok := descriptors[strings.ToLower(fields[0])]
		if !ok {
			return nil, fmt.Errorf("%w %q: unknown descriptor %q", ErrCron, expr, fields[0])
		}
		fields = strings.Fields(d)
	}
	switch len(fields) {
	case 5:
		fields = append([]string{"0"}, fields...)
	case 6:
	default:
		return nil, fmt.Errorf("%w %q: got %d fields, want 5 (minute hour day-of-month month day-of-week) or 6 (seconds first)", ErrCron, expr, len(fields))
	}
	fields[4] = monthNames.Replace(fields[4])
	fields[5] = dayNames.Replace(fields[5])
	c := &CronSchedule{expr: expr}
	for pos, f := range fields {
		matches, err := checkField(pos, f)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %s %q: %v", ErrCron, expr, fieldNames[pos], f, err)
		}
		if pos < 3 {
			c.clock[pos] = matches
		}
	}
	*c = CronSchedule{
		expr:      expr,
		clock:     c.clock,
		segments:  fields,
		wallClock: strings.HasPrefix(fields[1], "*") || strings.HasPrefix(fields[2], "*"),
	}
	if c.nextCivil(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), true).IsZero() {
		return nil, fmt.Errorf("%w %q: matches no time in %d years", ErrCron, expr, searchYears)
	}
	return c, nil
}

// String returns the expression as given to ParseCron.
func (c *CronSchedule) String() string { return c.expr }

// checkField refuses characters the field does not take, then asks the
// matcher about the field at every value it can meet: gronx reports some
// faults (a value out of range, a bad step) only at the times they touch.
// For the second, minute and hour fields it returns whether each value
// matches.
func checkField(pos int, f string) (matches []bool, err error) {
	for _, r := range f {
		if (r < '0' || r > '9') && !strings.ContainsRune(fieldChars[pos], r) {
			return nil, fmt.Errorf("unexpected %q", r)
		}
	}
	for _, part := range strings.Split(f, ",") {
		if part == "" {
			return nil, errors.New("empty list item")
		}
		if !listItem[pos].MatchString(part) {
			return nil, fmt.Errorf("bad item %q", part)
		}
		if day, nth, ok := strings.Cut(part, "#"); ok {
			d, err1 := strconv.Atoi(day)
			n, err2 := strconv.Atoi(nth)
			if err1 != nil || err2 != nil || d < 0 || d > 7 || n < 1 || n > 5 {
				return nil, fmt.Errorf("bad %q: want weekday#k, weekday 0 to 7, k 1 to 5", part)
			}
		}
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("bad value: %v", p)
		}
	}()
	checker := &gronx.SegmentChecker{}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var limit int
	var step func(int) time.Time
	switch pos {
	case 0:
		limit, step = 60, func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }
	case 1:
		limit, step = 60, func(i int) time.Time { return base.Add(time.Duration(i) * time.Minute) }
	case 2:
		limit, step = 24, func(i int) time.Time { return base.Add(time.Duration(i) * time.Hour) }
	case 4:
		limit, step = 12, func(i int) time.Time { return base.AddDate(0, i, 0) }
	default: // the day fields: every day of a leap year and the next
		limit, step = 731, func(i int) time.Time { return base.AddDate(0, 0, i) }
	}
	matches = make([]bool, limit)
	for i := range limit {
		checker.SetRef(step(i))
		due, err := checker.CheckDue(f, pos)
		if err != nil {
			return nil, err
		}
		matches[i] = due
	}
	return matches, nil
}

// matcher evaluates a schedule's fields at one time. It is not safe for
// concurrent use: each search makes its own.
type matcher struct {
	g    *gronx.Gronx
	segs []string
}

func (c *CronSchedule) matcher() *matcher {
	return &matcher{g: gronx.New(), segs: c.segments}
}

// due reports whether the fields from pos up match t (a civil time in UTC).
// Fields below pos are taken as '*'.
func (m *matcher) due(t time.Time, pos int) bool {
	segs := make([]string, 6)
	for i := range segs {
		segs[i] = "*"
		if i >= pos {
			segs[i] = m.segs[i]
		}
	}
	m.g.C.SetRef(t)
	ok, err := m.g.SegmentsDue(segs)
	return err == nil && ok
}

// nextCivil returns the first civil time (a wall-clock reading, held in UTC
// so that no daylight saving change interferes) at or after t if inclusive,
// else after t, whose fields match; the zero time if none does within
// searchYears.
func (c *CronSchedule) nextCivil(t time.Time, inclusive bool) time.Time {
	m := c.matcher()
	t = t.Truncate(time.Second)
	if !inclusive {
		t = t.Add(time.Second)
	}
	end := t.AddDate(searchYears, 0, 0)
	var dayChecked time.Time // the midnight of the last day found to match
	for t.Before(end) {
		y, mo, d := t.Date()
		midnight := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
		if !midnight.Equal(dayChecked) {
			if !m.due(t, 3) {
				t = midnight.AddDate(0, 0, 1)
				continue
			}
			dayChecked = midnight
		}
		h, mi, sec := t.Clock()
		switch {
		case !c.clock[2][h]:
			t = t.Truncate(time.Hour).Add(time.Hour)
		case !c.clock[1][mi]:
			t = t.Truncate(time.Minute).Add(time.Minute)
		default:
			next := -1
			for s := sec; s < 60; s++ {
				if c.clock[0][s] {
					next = s
					break
				}
			}
			if next < 0 {
				t = t.Truncate(time.Minute).Add(time.Minute)
				continue
			}
			return t.Add(time.Duration(next-sec) * time.Second)
		}
	}
	return time.Time{}
}

// civil returns t's wall-clock reading in its location as a time in UTC.
func civil(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC)
}

// instants returns the instants, earliest first, at which loc's clock reads
// the civil time c: none in a gap the clock skips, two in an hour it repeats.
func instants(c time.Time, loc *time.Location) []time.Time {
	var out []time.Time
	for _, probe := range []time.Time{c.Add(-36 * time.Hour), c.Add(36 * time.Hour)} {
		_, offset := probe.In(loc).Zone()
		t := c.Add(-time.Duration(offset) * time.Second).In(loc)
		if civil(t).Equal(c) && (len(out) == 0 || !out[0].Equal(t)) {
			out = append(out, t)
		}
	}
	if len(out) == 2 && out[1].Before(out[0]) {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// Next returns the first time after t, in loc, that the schedule names; the
// zero time if there is none within 30 years. Daylight saving changes follow
// ISC cron's rule. A schedule at fixed times (no '*' in the minute and hour
// fields) runs a time the clock skips once, at the instant of the jump, and
// a time the clock repeats once, the first time round. A schedule with '*'
// in the minute or hour field follows the clock: a skipped time does not
// happen, a repeated one happens twice, so "every 15 minutes" stays 15
// minutes apart across both changes.
func (c *CronSchedule) Next(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.Local
	}
	t = t.In(loc)
	if c.wallClock {
		return c.nextFollowingClock(t, loc)
	}
	from := civil(t)
	for {
		cv := c.nextCivil(from, false)
		if cv.IsZero() {
			return cv
		}
		from = cv
		var at time.Time
		switch is := instants(cv, loc); len(is) {
		case 0: // skipped by the clock: run at the jump
			_, offsetAfter := cv.Add(36 * time.Hour).In(loc).Zone()
			before := cv.Add(-time.Duration(offsetAfter) * time.Second).In(loc)
			_, at = before.ZoneBounds()
		default: // the first of one or two
			at = is[0]
		}
		if at.After(t) {
			return at
		}
	}
}

// nextFollowingClock searches zone period by zone period: within one the
// offset is fixed, so civil time and instants advance together.
func (c *CronSchedule) nextFollowingClock(t time.Time, loc *time.Location) time.Time {
	from, inclusive := t, false
	for range 2 * searchYears * 2 {
		_, end := from.ZoneBounds()
		_, offset := from.Zone()
		cv := c.nextCivil(civil(from), inclusive)
		if cv.IsZero() {
			return cv
		}
		at := cv.Add(-time.Duration(offset) * time.Second).In(loc)
		if end.IsZero() || at.Before(end) {
			if at.After(t) {
				return at
			}
			from, inclusive = at, false
			continue
		}
		from, inclusive = end, true
	}
	return time.Time{}
}
