package service

import (
	"fmt"
	"testing"
)

func TestVariableReferences(t *testing.T) {
	def := `{"QueryLanguage":"JSONata","StartAt":"A","States":{
		"A":{"Type":"Pass","Assign":{"x":"{% $count + $states.input.n %}","y":"{% $string($total) & 'a $quoted' %}"},"Next":"B"},
		"B":{"Type":"Pass","Output":"{% ($t := 2; $t * $x) %}","Next":"P"},
		"P":{"Type":"Parallel","Branches":[{"StartAt":"C","States":{"C":{"Type":"Pass","Output":"{% $map([1], function($v){ $v + $y }) %}","End":true}}}],"Next":"J"},
		"J":{"Type":"Pass","QueryLanguage":"JSONPath","Parameters":{"a.$":"$limit.max","b.$":"States.Format('{}', $who)","c.$":"$$.Execution.Id","d.$":"$.plain"},"InputPath":"$in","End":true}}}`
	got := VariableReferences(def)
	want := map[string]string{"A": "[count total]", "B": "[x]", "C": "[y]", "J": "[in limit who]"} // sorted, as AWS lists them
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, w := range want {
		if fmt.Sprint(got[k]) != w {
			t.Errorf("state %s: %v, want %s", k, got[k], w)
		}
	}
	if got := VariableReferences(`not json`); len(got) != 0 {
		t.Errorf("a definition that does not parse: %v", got)
	}
}

// FuzzVariableReferences: any text is scanned without panicking, and every
// name listed is an identifier.
func FuzzVariableReferences(f *testing.F) {
	f.Add(`{"StartAt":"A","States":{"A":{"Type":"Pass","Output":"{% $a + $b($c) %}","End":true}}}`)
	f.Add(`{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"x.$":"States.Format('$q', $v)"},"End":true}}}`)
	f.Add(`{"States":{"A":{"Output":"{% function($ %}"}}}`)
	f.Add(`{"States":{"A":{"Output":"{% \"unterminated %}"}}}`)
	f.Fuzz(func(t *testing.T, def string) {
		for state, names := range VariableReferences(def) {
			for _, n := range names {
				if n == "" || n == "states" || !isIdent(n[0], true) {
					t.Fatalf("state %q: name %q", state, n)
				}
			}
		}
	})
}
