package scheduler

import (
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestNext(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		expr   string
		loc    *time.Location
		after  string
		anchor string
		want   string // "" : none
	}{
		{"cron(0 12 * * ? *)", time.UTC, "2026-01-01T13:00:00Z", "", "2026-01-02T12:00:00Z"},
		{"cron(0 12 * * ? *)", time.UTC, "2026-01-01T11:59:30Z", "", "2026-01-01T12:00:00Z"},
		{"cron(0 12 * * ? *)", time.UTC, "2026-01-01T12:00:00Z", "", "2026-01-02T12:00:00Z"},
		{"cron(*/15 * * * ? *)", time.UTC, "2026-01-01T10:07:00Z", "", "2026-01-01T10:15:00Z"},
		{"cron(5,35 14 * * ? *)", time.UTC, "2026-01-01T14:06:00Z", "", "2026-01-01T14:35:00Z"},
		{"cron(0 10 ? * 6L *)", time.UTC, "2026-01-01T00:00:00Z", "", "2026-01-30T10:00:00Z"},     // last Friday
		{"cron(0 0 L * ? *)", time.UTC, "2028-02-01T00:00:00Z", "", "2028-02-29T00:00:00Z"},       // last day, leap year
		{"cron(0 0 L-2 * ? *)", time.UTC, "2026-04-01T00:00:00Z", "", "2026-04-28T00:00:00Z"},     // two days before the last
		{"cron(0 9 15W * ? *)", time.UTC, "2026-11-01T00:00:00Z", "", "2026-11-16T09:00:00Z"},     // the 15th is a Sunday
		{"cron(0 9 1W * ? *)", time.UTC, "2026-07-31T00:00:00Z", "", "2026-08-03T09:00:00Z"},      // the 1st is a Saturday
		{"cron(0 9 LW * ? *)", time.UTC, "2026-05-01T00:00:00Z", "", "2026-05-29T09:00:00Z"},      // the 31st is a Sunday
		{"cron(0 9 ? * 2#1 *)", time.UTC, "2026-12-01T00:00:00Z", "", "2026-12-07T09:00:00Z"},     // first Monday
		{"cron(0 9 ? * MON-FRI *)", time.UTC, "2026-11-27T10:00:00Z", "", "2026-11-30T09:00:00Z"}, // Friday after 9: Monday
		{"cron(0 9 ? * FRI-MON *)", time.UTC, "2026-11-24T10:00:00Z", "", "2026-11-27T09:00:00Z"}, // wrapping range
		{"cron(0 8 1 JAN,JUL ? 2027)", time.UTC, "2026-01-01T00:00:00Z", "", "2027-01-01T08:00:00Z"},
		{"cron(0 8 1 JAN ? 2025)", time.UTC, "2026-01-01T00:00:00Z", "", ""},
		{"cron(0 0 30 2 ? *)", time.UTC, "2026-01-01T00:00:00Z", "", ""},
		{"cron(0 9 * * ? *)", ny, "2026-03-01T00:00:00Z", "", "2026-03-01T14:00:00Z"},
		{"cron(0 9 * * ? *)", ny, "2026-03-09T00:00:00Z", "", "2026-03-09T13:00:00Z"}, // after the change to daylight saving time
		{"rate(5 minutes)", time.UTC, "2026-01-01T00:00:00Z", "2026-01-01T00:00:30Z", "2026-01-01T00:00:30Z"},
		{"rate(5 minutes)", time.UTC, "2026-01-01T00:00:30Z", "2026-01-01T00:00:30Z", "2026-01-01T00:05:30Z"},
		{"rate(1 hour)", time.UTC, "2026-01-01T03:10:00Z", "2026-01-01T00:00:00Z", "2026-01-01T04:00:00Z"},
		{"rate(2 days)", time.UTC, "2026-01-01T00:00:00Z", "2025-12-31T00:00:00Z", "2026-01-02T00:00:00Z"},
		{"at(2026-06-01T10:00:00)", ny, "2026-01-01T00:00:00Z", "", "2026-06-01T14:00:00Z"},
		{"at(2026-06-01T10:00:00)", time.UTC, "2026-06-01T10:00:00Z", "", ""},
	}
	for _, c := range cases {
		e, err := ParseExpr(c.expr, c.loc)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		var anchor time.Time
		if c.anchor != "" {
			anchor = utc(c.anchor)
		}
		got := e.Next(utc(c.after), anchor)
		want := ""
		if !got.IsZero() {
			want = got.UTC().Format(time.RFC3339)
		}
		if want != c.want {
			t.Errorf("%s in %s after %s: %q, want %q", c.expr, c.loc, c.after, want, c.want)
		}
	}
}

func TestParseExprErrors(t *testing.T) {
	for _, s := range []string{
		"cron(0 12 * * * *)", "cron(0 12 ? * ? *)", "cron(0 12 * * ?)", "cron(60 12 * * ? *)", "cron(0 24 * * ? *)",
		"cron(0 12 32 * ? *)", "cron(0 12 ? * 8 *)", "cron(0 12 ? * 2#6 *)", "cron(0 12 * 13 ? *)", "cron(0 12 * * ? 1969)",
		"cron(*/0 * * * ? *)", "cron(0 12 0W * ? *)", "cron(0 12 L-31 * ? *)", "cron(a 12 * * ? *)",
		"rate(0 minutes)", "rate(5 weeks)", "rate(-1 minutes)", "rate(5)", "rate(five minutes)",
		"at(2026-13-01T00:00:00)", "at(2026-01-01 00:00:00)", "at(2026-01-01T00:00:00Z)",
		"every(5 minutes)", "cron", "", "rate(5 minutes", "cron(0 12 * * ? *) ",
	} {
		if _, err := ParseExpr(s, time.UTC); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

// FuzzParseExpr checks that any expression parses or is refused without
// panicking, and that a parsed one's next time is after the time given.
func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{"cron(0 12 * * ? *)", "cron(0/5 8-17 ? * MON-FRI *)", "cron(0 0 L * ? *)", "cron(0 9 15W * ? *)",
		"cron(0 9 ? * 2#1 *)", "cron(0 10 ? * 6L 2026-2030)", "cron(0 9 ? * FRI-MON *)", "rate(5 minutes)", "rate(1 day)",
		"at(2026-06-01T10:00:00)", "cron(0 22-2/3 * * ? *)"} {
		f.Add(s, int64(1_780_000_000))
	}
	f.Fuzz(func(t *testing.T, s string, sec int64) {
		e, err := ParseExpr(s, time.UTC)
		if err != nil {
			return
		}
		after := time.Unix(sec%(1<<33), 0).UTC()
		if next := e.Next(after, after); !next.IsZero() && !next.After(after) {
			t.Fatalf("%s: next %v is not after %v", s, next, after)
		}
	})
}
