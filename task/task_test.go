package task

import "testing"

func TestPattern(t *testing.T) {
	for _, tt := range []struct {
		p              Pattern
		string, suffix string
		job            bool
	}{
		{RequestResponse, "request-response", "", false},
		{Sync, ".sync", ".sync", true},
		{Sync2, ".sync:2", ".sync:2", true},
		{WaitForTaskToken, ".waitForTaskToken", ".waitForTaskToken", false},
		{Activity, "activity", "", false},
		{Pattern(9), "Pattern(9)", "", false},
	} {
		if got := tt.p.String(); got != tt.string {
			t.Errorf("String() = %q, want %q", got, tt.string)
		}
		if got := tt.p.Suffix(); got != tt.suffix {
			t.Errorf("%v: Suffix() = %q, want %q", tt.p, got, tt.suffix)
		}
		if got := tt.p.Job(); got != tt.job {
			t.Errorf("%v: Job() = %v, want %v", tt.p, got, tt.job)
		}
	}
	var r Request
	if r.Pattern != RequestResponse {
		t.Error("a Request's zero Pattern is not RequestResponse")
	}
}
