package interp_test

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/value"
)

// TestRandDeterminism runs a program that draws every kind of random value
// (States.UUID, States.MathRandom, $uuid(), $random(), FULL retry jitter,
// a Map Run ARN) with the same inputs: the same Rand values must give the
// same history and commands, other values another history.
func TestRandDeterminism(t *testing.T) {
	t.Parallel()
	def, err := value.ParseString(`{"StartAt":"P","States":{
		"P":{"Type":"Pass","Parameters":{"id.$":"States.UUID()","n.$":"States.MathRandom(0, 1000000000)"},"Next":"J"},
		"J":{"Type":"Pass","QueryLanguage":"JSONata","Output":{"id":"{% $uuid() %}","r":"{% $random() %}"},"Next":"T"},
		"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":100,"JitterStrategy":"FULL"}],"Next":"M"},
		"M":{"Type":"Map","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}},"ItemsPath":"$.items","End":true}}}`)
	if err != nil {
		t.Fatal(err)
	}
	c := &goldenCase{
		Definition: def,
		Input:      value.NewObject(0),
		Steps: []goldenStep{
			{Cmd: 1, Error: "Boom"},
			{Cmd: 2, Fire: true},
			{Cmd: 3, Output: value.ObjectOf("items", []any{value.Int(1)}), HasOutput: true},
		},
	}
	a := runGolden(t, c, rand.NewPCG(1, 2))
	if b := runGolden(t, c, rand.NewPCG(1, 2)); !bytes.Equal(a, b) {
		t.Errorf("the same Rand values gave different runs:\n%s", lineDiff(string(a), string(b)))
	}
	b := runGolden(t, c, rand.NewPCG(3, 4))
	if bytes.Equal(a, b) {
		t.Fatal("different Rand values gave the same run")
	}
	// Each kind of random value differs.
	for _, marker := range []string{`StartTimer id=2`, `\"n\":`, `\"r\":`, `"mapRunArn":`} {
		la, lb := lineWith(a, marker), lineWith(b, marker)
		if la == "" || la == lb {
			t.Errorf("the runs do not differ in their line with %s:\n%s\n%s", marker, la, lb)
		}
	}
	// Without a Rand, the source is seeded from the execution ARN.
	if x, y := runGolden(t, c, nil), runGolden(t, c, nil); !bytes.Equal(x, y) {
		t.Errorf("two runs without a Rand differ:\n%s", lineDiff(string(x), string(y)))
	}
}

// lineWith returns the first line of text that contains marker.
func lineWith(text []byte, marker string) string {
	for _, l := range bytes.Split(text, []byte("\n")) {
		if bytes.Contains(l, []byte(marker)) {
			return string(l)
		}
	}
	return ""
}

func TestTaskTokens(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	arn := "arn:aws:states:us-east-1:123456789012:execution:m:e"
	tok := interp.SignToken(key, arn, 3)
	if a, n, ok := interp.VerifyToken(key, tok); !ok || a != arn || n != 3 {
		t.Fatalf("VerifyToken(SignToken) = %q %d %v", a, n, ok)
	}
	if tok == interp.SignToken(key, arn, 4) || tok == interp.SignToken([]byte("other"), arn, 3) {
		t.Fatal("tokens of another counter or key are the same")
	}
	payload, mac, _ := strings.Cut(tok, ".")
	for _, forged := range []string{
		base64.RawURLEncoding.EncodeToString([]byte(arn + "#3")),                                                          // the old, unsigned form
		base64.RawURLEncoding.EncodeToString([]byte(arn+"#4")) + "." + mac,                                                // another counter, same MAC
		base64.RawURLEncoding.EncodeToString([]byte("arn:aws:states:us-east-1:123456789012:execution:m:x#3")) + "." + mac, // another execution
		payload + "." + base64.RawURLEncoding.EncodeToString(make([]byte, 16)),                                            // a made-up MAC
		payload + "." + mac[:len(mac)-2],                                                                                  // a short MAC
		"", ".", "not base64!." + mac, payload + ".",
	} {
		if _, _, ok := interp.VerifyToken(key, forged); ok {
			t.Errorf("VerifyToken accepted the forged token %q", forged)
		}
	}
	if _, _, ok := interp.VerifyToken([]byte("another server's key"), tok); ok {
		t.Error("a token signed with another key was accepted")
	}
}
