package api

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzCheckBytes: checkBytes never panics, refuses every body that is not
// UTF-8 with a SerializationException, and lets a body that is UTF-8 and
// holds no \u escape through.
func FuzzCheckBytes(f *testing.F) {
	for _, s := range []string{`{}`, `{"name":"a\u0000"}`, `{"name":"\ud800"}`, `{"executionArn":"\udc00\ud800"}`, "{\"input\":\"\xff\"}",
		`{"tags":[{"key":"k","value":"v"}],"name":"\ud83d\ude00"}`, `{"name":"\\ud800"}`, `[1,{"a":[{"name":"\u0000"}]}]`, "\xff", `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := checkBytes(body)
		var ae *apiError
		if !utf8.Valid(body) {
			if !errors.As(err, &ae) || ae.code != "SerializationException" {
				t.Fatalf("checkBytes(%q) = %v, want a SerializationException", body, err)
			}
			return
		}
		if err != nil && (!errors.As(err, &ae) || (ae.code != "InvalidName" && ae.code != "InvalidArn")) {
			t.Fatalf("checkBytes(%q) = %v, want nil, InvalidName or InvalidArn", body, err)
		}
	})
}

func TestLoneSurrogate(t *testing.T) {
	for raw, want := range map[string]bool{
		`"\ud800"`: true, `"\udc00"`: true, `"\ud83d\ude00"`: false, `"\\ud800"`: false, `"\\\ud800"`: true,
		`"\ud800\u0041"`: true, `"\uD800\uDC00"`: false, `"\ud800`: true, `"abc"`: false, `"\u00e9"`: false,
	} {
		if got := loneSurrogate([]byte(raw)); got != want {
			t.Errorf("loneSurrogate(%s) = %v, want %v", raw, got, want)
		}
	}
}
