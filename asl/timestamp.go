package asl

import (
	"strings"
	"time"
)

// validTimestamp reports whether s is an RFC 3339 timestamp as ASL accepts
// it: date and time separated by an uppercase T, and a Z or numeric offset.
func validTimestamp(s string) bool {
	if strings.ContainsAny(s, "tz ") {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}
