package interp

import (
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

// FuzzParseItems checks the ItemReader's object parsers: they never panic;
// every JSON Lines item is a parsed line; every CSV item is an object
// with one string member per header.
func FuzzParseItems(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a|b\n1|2", "\"x,y\",z\n1,2\n", "a,b\n1\n", "{\"a\":1}\n\n[2]\n", "[1,2,3]", "{}", "", "\xff"} {
		for _, typ := range []string{"JSON", "JSONL", "CSV"} {
			f.Add(typ, s, false, "")
		}
	}
	f.Add("CSV", "1;2\n3;4\n", true, "SEMICOLON")
	f.Fuzz(func(t *testing.T, typ, body string, given bool, delim string) {
		if _, ok := csvDelimiters[delim]; !ok {
			delim = ""
		}
		var headers []string
		if given {
			headers = []string{"h1", "h2"}
		}
		items, err := parseItems(typ, body, given, headers, delim)
		if err != nil {
			return
		}
		switch typ {
		case "JSONL":
			lines := 0
			for _, l := range strings.Split(body, "\n") {
				if strings.TrimSpace(l) != "" {
					lines++
				}
			}
			if len(items) != lines {
				t.Fatalf("%d items from %d lines", len(items), lines)
			}
		case "CSV":
			for _, it := range items {
				o, ok := it.(*value.Object)
				if !ok {
					t.Fatalf("item %s is not an object", value.String(it))
				}
				if given && o.Len() != 2 {
					t.Fatalf("item %s has not the 2 given headers", value.String(o))
				}
				for _, v := range o.All {
					if _, isStr := v.(string); !isStr {
						t.Fatalf("CSV value %s is not a string", value.String(v))
					}
				}
			}
		}
	})
}
