package jsonata

import (
	"reflect"
	"regexp"
	"sync"
	"unicode/utf8"

	"github.com/recolabs/gnata"
)

// matchName is the variable the adapter binds to its $match. gnata's
// counted the characters before every match from the start of the string,
// which is quadratic in its length (32,768 characters took 1.6 s, 256 KB
// minutes) inside one call that never looks at the context. The adapter's
// counts as it goes and consults the context every 1,024 matches; a
// function as the matcher is left to gnata's (its type, which receives the
// evaluation's environment, is read from gnata's $match at start-up).
const matchName = "match"

// gnataMatch is gnata's $match; nil when it is not the function type the
// adapter knows (then $match stays gnata's).
var gnataMatch = func() reflect.Value {
	f, ok := gnata.NewCustomEnv(nil).Lookup(matchName)
	if !ok {
		return reflect.Value{}
	}
	fn := reflect.ValueOf(f)
	t := fn.Type()
	if fn.Kind() != reflect.Func || t.NumIn() != 3 || t.NumOut() != 2 || t.In(0) != reflect.TypeOf([]any(nil)) ||
		t.Out(0) != reflect.TypeOf((*any)(nil)).Elem() || t.Out(1) != reflect.TypeOf((*error)(nil)).Elem() {
		return reflect.Value{}
	}
	return fn
}()

// matchFunc returns the adapter's $match bound to s's context.
func (s *serialiser) matchFunc() any {
	return reflect.MakeFunc(gnataMatch.Type(), func(in []reflect.Value) []reflect.Value {
		args, _ := in[0].Interface().([]any)
		if len(args) >= 2 && isFunction(args[1]) {
			return gnataMatch.Call(in)
		}
		r, err := s.fnMatch(args)
		return []reflect.Value{reflect.ValueOf(&r).Elem(), reflect.ValueOf(&err).Elem()}
	}).Interface()
}

// fnMatch is JSONata's $match(str, pattern, limit) for a regular
// expression or a string pattern: a sequence of {match, index, groups},
// index counted in UTF-16 code units as JavaScript counts.
func (s *serialiser) fnMatch(args []any) (any, error) {
	if len(args) < 2 {
		return nil, &Error{Code: "D3006", Token: matchName, Message: "$match: requires at least 2 arguments"}
	}
	if len(args) > 3 {
		return nil, arityError(matchName)
	}
	v := arg(args, 0)
	if v == nil {
		return nil, nil
	}
	str, ok := v.(string)
	if !ok {
		return nil, sigError(matchName, 0)
	}
	limit := -1
	if l, ok, err := numberArg(args, 2, matchName); err != nil {
		return nil, err
	} else if ok {
		limit = int(l)
	}
	re, err := patternArg(args[1])
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		return nil, nil
	}
	locs := re.FindAllStringSubmatchIndex(str, limit)
	if len(locs) == 0 {
		return nil, nil
	}
	out := make([]any, 0, len(locs))
	pos, units := 0, 0 // a byte offset and the UTF-16 units before it
	for i, loc := range locs {
		if i%checkEvery == checkEvery-1 && s.ctx != nil {
			if err := s.ctx.Err(); err != nil {
				return nil, err
			}
		}
		units += utf16Len(str[pos:loc[0]])
		pos = loc[0]
		groups := make([]any, 0, len(loc)/2-1)
		for g := 2; g+1 < len(loc); g += 2 {
			if loc[g] < 0 {
				groups = append(groups, "")
			} else {
				groups = append(groups, str[loc[g]:loc[g+1]])
			}
		}
		out = append(out, newOrderedMap([]string{"match", "index", "groups"}, map[string]any{
			"match": str[loc[0]:loc[1]], "index": float64(units), "groups": groups,
		}))
	}
	return newSequence(out), nil
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// patterns caches compiled regular expressions by flags and pattern; it
// stops growing at maxPatterns (patterns built at run time are compiled
// each time then).
var patterns = struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}{m: make(map[string]*regexp.Regexp)}

const maxPatterns = 1000

// patternArg compiles $match's pattern: a regular expression literal
// (gnata's {pattern, flags}) or a string matched literally.
func patternArg(p any) (*regexp.Regexp, error) {
	var src string
	switch x := p.(type) {
	case string:
		src = regexp.QuoteMeta(x)
	case map[string]any:
		pat, _ := x["pattern"].(string)
		flags, _ := x["flags"].(string)
		src = pat
		var f []byte
		for _, c := range "ims" {
			for _, d := range flags {
				if c == d {
					f = append(f, byte(c))
					break
				}
			}
		}
		if len(f) > 0 {
			src = "(?" + string(f) + ")" + pat
		}
	default:
		return nil, sigError(matchName, 1)
	}
	patterns.Lock()
	re := patterns.m[src]
	patterns.Unlock()
	if re != nil {
		return re, nil
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, &Error{Code: "D3137", Token: matchName, Message: "invalid regex: " + err.Error()}
	}
	patterns.Lock()
	if len(patterns.m) < maxPatterns {
		patterns.m[src] = re
	}
	patterns.Unlock()
	return re, nil
}
