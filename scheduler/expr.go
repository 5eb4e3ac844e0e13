package scheduler

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Expr is a parsed schedule expression: at(), rate() or cron().
type Expr struct {
	kind string // "at", "rate" or "cron"
	at   time.Time
	rate time.Duration
	cron *cron
	loc  *time.Location
}

// OneTime reports whether the expression is at(): one invocation.
func (e *Expr) OneTime() bool { return e.kind == "at" }

// ParseExpr parses a schedule expression evaluated in loc.
func ParseExpr(s string, loc *time.Location) (*Expr, error) {
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return nil, fmt.Errorf("invalid Schedule Expression %s: want at(...), rate(...) or cron(...)", s)
	}
	kind, body := s[:open], s[open+1:len(s)-1]
	e := &Expr{kind: kind, loc: loc}
	switch kind {
	case "at":
		t, err := time.ParseInLocation("2006-01-02T15:04:05", body, loc)
		if err != nil {
			return nil, fmt.Errorf("invalid Schedule Expression %s: want at(yyyy-mm-ddThh:mm:ss)", s)
		}
		e.at = t
	case "rate":
		f := strings.Fields(body)
		if len(f) != 2 {
			return nil, fmt.Errorf("invalid Schedule Expression %s: want rate(value unit)", s)
		}
		n, err := strconv.Atoi(f[0])
		if err != nil || n <= 0 || n > 1_000_000 {
			return nil, fmt.Errorf("invalid Schedule Expression %s: the value must be a positive integer", s)
		}
		var unit time.Duration
		switch f[1] {
		case "minute", "minutes":
			unit = time.Minute
		case "hour", "hours":
			unit = time.Hour
		case "day", "days":
			unit = 24 * time.Hour
		default:
			return nil, fmt.Errorf("invalid Schedule Expression %s: the unit must be minute(s), hour(s) or day(s)", s)
		}
		e.rate = time.Duration(n) * unit
	case "cron":
		c, err := parseCron(body)
		if err != nil {
			return nil, fmt.Errorf("invalid Schedule Expression %s: %w", s, err)
		}
		e.cron = c
	default:
		return nil, fmt.Errorf("invalid Schedule Expression %s: want at(...), rate(...) or cron(...)", s)
	}
	return e, nil
}

// Next returns the first due time strictly after after, for a schedule
// anchored at anchor (a rate's first occurrence: its StartDate or its
// creation); the zero time when there is none.
func (e *Expr) Next(after, anchor time.Time) time.Time {
	switch e.kind {
	case "at":
		if e.at.After(after) {
			return e.at
		}
		return time.Time{}
	case "rate":
		if anchor.After(after) {
			return anchor
		}
		n := after.Sub(anchor)/e.rate + 1
		return anchor.Add(n * e.rate)
	}
	return e.cron.next(after.In(e.loc))
}

// cron is a parsed cron(minutes hours day-of-month month day-of-week year)
// expression, EventBridge's syntax.
type cron struct {
	minute, hour, month uint64    // bit sets
	years               [4]uint64 // bits of year-1970, 1970…2199
	dom                 domSpec
	dow                 dowSpec
	domAny, dowAny      bool // "?" (or "*")
}

type domSpec struct {
	days    uint64 // bits 1…31
	last    bool   // L
	lastOff int    // L-n
	weekday int    // nW (0: none)
	lastW   bool   // LW
}

type dowSpec struct {
	days   uint64 // bits 1…7 (1 = Sunday)
	last   int    // nL: the last such weekday of the month (0: none)
	nth    [2]int // d#n (d 1…7, n 1…5; 0: none)
	hasNth bool
}

const (
	minYear = 1970
	maxYear = 2199
)

var monthNames = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6, "JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}
var dayNames = map[string]int{"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}

func parseCron(body string) (*cron, error) {
	f := strings.Fields(body)
	if len(f) != 6 {
		return nil, fmt.Errorf("a cron expression has 6 fields (minutes hours day-of-month month day-of-week year), not %d", len(f))
	}
	c := &cron{}
	var err error
	if c.minute, err = parseField(f[0], 0, 59, nil, "minutes"); err != nil {
		return nil, err
	}
	if c.hour, err = parseField(f[1], 0, 23, nil, "hours"); err != nil {
		return nil, err
	}
	if c.month, err = parseField(f[3], 1, 12, monthNames, "month"); err != nil {
		return nil, err
	}
	ys, err := parseSet(f[5], minYear, maxYear, nil, "year")
	if err != nil {
		return nil, err
	}
	for _, y := range ys {
		y -= minYear
		c.years[y/64] |= 1 << (y % 64)
	}
	c.domAny, c.dowAny = f[2] == "?", f[4] == "?"
	if c.domAny == c.dowAny {
		return nil, fmt.Errorf("one of day-of-month and day-of-week must be ?, and only one")
	}
	if !c.domAny {
		if err := c.parseDom(f[2]); err != nil {
			return nil, err
		}
	}
	if !c.dowAny {
		if err := c.parseDow(f[4]); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *cron) parseDom(s string) error {
	switch {
	case s == "L":
		c.dom.last = true
		return nil
	case s == "LW":
		c.dom.lastW = true
		return nil
	case strings.HasPrefix(s, "L-"):
		n, err := strconv.Atoi(s[2:])
		if err != nil || n < 1 || n > 30 {
			return fmt.Errorf("day-of-month %s: want L-n with n from 1 to 30", s)
		}
		c.dom.last, c.dom.lastOff = true, n
		return nil
	case strings.HasSuffix(s, "W"):
		n, err := strconv.Atoi(s[:len(s)-1])
		if err != nil || n < 1 || n > 31 {
			return fmt.Errorf("day-of-month %s: want nW with n from 1 to 31", s)
		}
		c.dom.weekday = n
		return nil
	}
	var err error
	c.dom.days, err = parseField(s, 1, 31, nil, "day-of-month")
	return err
}

func (c *cron) parseDow(s string) error {
	if d, n, ok := strings.Cut(s, "#"); ok {
		day, err := fieldValue(d, 1, 7, dayNames)
		if err != nil {
			return fmt.Errorf("day-of-week %s: %w", s, err)
		}
		nth, err := strconv.Atoi(n)
		if err != nil || nth < 1 || nth > 5 {
			return fmt.Errorf("day-of-week %s: want d#n with n from 1 to 5", s)
		}
		c.dow.nth, c.dow.hasNth = [2]int{day, nth}, true
		return nil
	}
	if s == "L" {
		c.dow.last = 7
		return nil
	}
	if d, ok := strings.CutSuffix(s, "L"); ok {
		day, err := fieldValue(d, 1, 7, dayNames)
		if err != nil {
			return fmt.Errorf("day-of-week %s: %w", s, err)
		}
		c.dow.last = day
		return nil
	}
	var err error
	c.dow.days, err = parseField(s, 1, 7, dayNames, "day-of-week")
	return err
}

// parseField parses a list of values, ranges (a-b), steps (*/n, a/n,
// a-b/n) and * into a bit set.
func parseField(s string, lo, hi int, names map[string]int, field string) (uint64, error) {
	vs, err := parseSet(s, lo, hi, names, field)
	if err != nil {
		return 0, err
	}
	var bits uint64
	for _, v := range vs {
		bits |= 1 << v
	}
	return bits, nil
}

func parseSet(s string, lo, hi int, names map[string]int, field string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		rng, stepText, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 || n > hi-lo+1 {
				return nil, fmt.Errorf("%s %s: invalid increment %q", field, s, stepText)
			}
			step = n
		}
		from, to := lo, hi
		switch {
		case rng == "*":
		default:
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if from, err = fieldValue(a, lo, hi, names); err != nil {
				return nil, fmt.Errorf("%s %s: %w", field, s, err)
			}
			to = from
			if isRange {
				if to, err = fieldValue(b, lo, hi, names); err != nil {
					return nil, fmt.Errorf("%s %s: %w", field, s, err)
				}
			} else if hasStep {
				to = hi
			}
		}
		span := to - from
		if to < from { // a wrapping range (FRI-MON, 22-2) runs to the end and on from the start
			span = hi - from + 1 + to - lo
		}
		for off := 0; off <= span; off += step {
			v := from + off
			if v > hi {
				v -= hi - lo + 1
			}
			out = append(out, v)
		}
	}
	return out, nil
}

func fieldValue(s string, lo, hi int, names map[string]int) (int, error) {
	if v, ok := names[strings.ToUpper(s)]; ok {
		return v, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%q is not a value from %d to %d", s, lo, hi)
	}
	return v, nil
}

func (c *cron) yearOK(y int) bool {
	if y < minYear || y > maxYear {
		return false
	}
	y -= minYear
	return c.years[y/64]&(1<<(y%64)) != 0
}

// dayOK reports whether the day d of month m of year y matches.
func (c *cron) dayOK(y int, m time.Month, d int) bool {
	last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	wd := int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Weekday()) + 1 // 1 = Sunday
	if !c.domAny {
		switch {
		case c.dom.last:
			return d == last-c.dom.lastOff
		case c.dom.lastW:
			return d == nearestWeekday(y, m, last, last)
		case c.dom.weekday != 0:
			if c.dom.weekday > last {
				return false
			}
			return d == nearestWeekday(y, m, c.dom.weekday, last)
		}
		return c.dom.days&(1<<d) != 0
	}
	switch {
	case c.dow.hasNth:
		return wd == c.dow.nth[0] && (d-1)/7+1 == c.dow.nth[1]
	case c.dow.last != 0:
		return wd == c.dow.last && d+7 > last
	}
	return c.dow.days&(1<<wd) != 0
}

// nearestWeekday is the weekday (Monday to Friday) nearest to day d of the
// month, within the month.
func nearestWeekday(y int, m time.Month, d, last int) int {
	switch time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Weekday() {
	case time.Saturday:
		if d == 1 {
			return 3
		}
		return d - 1
	case time.Sunday:
		if d == last {
			return d - 2
		}
		return d + 1
	}
	return d
}

// next returns the first matching minute strictly after t (in t's
// location), or the zero time before 2200.
func (c *cron) next(t time.Time) time.Time {
	loc := t.Location()
	start := t.Truncate(time.Minute).Add(time.Minute)
	if start.Year() < minYear {
		start = time.Date(minYear, 1, 1, 0, 0, 0, 0, loc)
	}
	y, m, d := start.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	for ; day.Year() <= maxYear; day = day.AddDate(0, 0, 1) {
		y, m, d := day.Date()
		if !c.yearOK(y) {
			day = time.Date(y, 12, 31, 0, 0, 0, 0, time.UTC)
			continue
		}
		if c.month&(1<<uint(m)) == 0 {
			day = time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC)
			continue
		}
		if !c.dayOK(y, m, d) {
			continue
		}
		for h := 0; h < 24; h++ {
			if c.hour&(1<<h) == 0 {
				continue
			}
			for mi := 0; mi < 60; mi++ {
				if c.minute&(1<<mi) == 0 {
					continue
				}
				at := time.Date(y, m, d, h, mi, 0, 0, loc)
				// A wall time that does not exist (skipped by a daylight
				// saving change) is normalised past it by time.Date; one
				// that is before start was already due.
				if !at.Before(start) {
					return at
				}
			}
		}
	}
	return time.Time{}
}
