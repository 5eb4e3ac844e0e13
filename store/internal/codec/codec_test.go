package codec

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stepd/stepd/store"
)

func TestToken(t *testing.T) {
	f := FilterHash("sm", "RUNNING")
	tok := MakeToken(KindExecutions, f, -42, "a", "")
	n, strs, err := ParseToken(tok, KindExecutions, f, 2)
	if err != nil || n != -42 || len(strs) != 2 || strs[0] != "a" || strs[1] != "" {
		t.Fatalf("ParseToken = %d %q %v", n, strs, err)
	}
	for _, bad := range []struct {
		tok    string
		kind   byte
		filter uint64
	}{{tok, KindActivities, f}, {tok, KindExecutions, f + 1}, {tok[:len(tok)-1], KindExecutions, f}, {"", KindExecutions, f}} {
		if _, _, err := ParseToken(bad.tok, bad.kind, bad.filter, 2); !errors.Is(err, store.ErrBadToken) {
			t.Errorf("ParseToken(%q, %c, %d) = %v, want ErrBadToken", bad.tok, bad.kind, bad.filter, err)
		}
	}
}

// FuzzToken checks that ParseToken never panics and accepts only what
// MakeToken made.
func FuzzToken(f *testing.F) {
	f.Add(MakeToken(KindStateMachines, 0, 0, "n", "arn"))
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, tok string) {
		n, strs, err := ParseToken(tok, KindStateMachines, 0, 2)
		if err != nil {
			return
		}
		if again := MakeToken(KindStateMachines, 0, n, strs...); again != tok {
			t.Fatalf("token %q parsed to %d %q, which encodes as %q", tok, n, strs, again)
		}
	})
}

// FuzzEvents checks that DecodeEvents never panics and that what it
// decodes packs back to the same bytes.
func FuzzEvents(f *testing.F) {
	f.Add(AppendEvents(nil, []store.Event{{ID: 1, Type: "PassStateEntered", JSON: []byte(`{}`)}}))
	f.Add([]byte{0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := DecodeEvents(b)
		if err != nil {
			return
		}
		if again := AppendEvents(nil, evs); !bytes.Equal(again, b) {
			t.Fatalf("%x decoded to %d events that pack as %x", b, len(evs), again)
		}
	})
}
