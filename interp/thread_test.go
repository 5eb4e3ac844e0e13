package interp

import (
	"testing"
	"time"
)

func TestFormatTime(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("x", 5*3600+1800)
	for _, tm := range []time.Time{
		time.Unix(0, 0),
		time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.UTC),
		time.Date(2024, 3, 1, 4, 5, 6, 7000000, loc),
		time.Date(9, 1, 2, 3, 4, 5, 60000000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		{},
	} {
		want := tm.UTC().Format("2006-01-02T15:04:05.000Z")
		if got := formatTime(tm); got != want {
			t.Errorf("formatTime(%v) = %q, want %q", tm, got, want)
		}
	}
}

func TestIsActivity(t *testing.T) {
	t.Parallel()
	for res, want := range map[string]bool{
		"arn:aws:states:us-east-1:123456789012:activity:a":   true,
		"arn:aws:states:us-east-1:123456789012:activity:a:b": true,
		"arn:aws:states:us-east-1:123456789012:activity":     false,
		"arn:aws:states:us-east-1:123456789012:activity:":    true,
		"arn:aws:lambda:us-east-1:123456789012:activity:a":   false,
		"arn:aws:states:::activity:a":                        true,
		"arn:aws:states:::lambda:invoke":                     false,
		"":                                                   false,
	} {
		if got := isActivity(res); got != want {
			t.Errorf("isActivity(%q) = %v, want %v", res, got, want)
		}
	}
}
