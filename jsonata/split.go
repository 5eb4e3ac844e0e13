package jsonata

import (
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/recolabs/gnata"
)

// splitName is the variable the adapter binds to its $split. gnata's
// splits the whole string at once, without looking at the context: a
// string of millions of characters split into characters allocates about
// 50 bytes per character in that one call (800 MB in 2.6 s). The adapter's
// splits at a string separator part by part and consults the context every
// 1,024 parts, so the allocation budget sees the parts as they are made; a
// regular expression as the separator is left to gnata's.
const splitName = "split"

// gnataSplit is gnata's $split, when it is a plain native function (else
// $split stays gnata's).
var gnataSplit = func() rawFunc {
	f, ok := gnata.NewCustomEnv(nil).Lookup(splitName)
	if !ok {
		return nil
	}
	fn := reflect.ValueOf(f)
	if fn.Kind() != reflect.Func || !fn.Type().ConvertibleTo(reflect.TypeOf(rawFunc(nil))) {
		return nil
	}
	return fn.Convert(reflect.TypeOf(rawFunc(nil))).Interface().(rawFunc)
}()

// fnSplit is JSONata's $split(str, separator, limit) for a string
// separator: the parts between the separators (the characters, for ""),
// at most limit of them.
func (s *serialiser) fnSplit(args []any, focus any) (any, error) {
	sep, isString := arg(args, 1).(string)
	if len(args) < 2 || len(args) > 3 || !isString {
		return gnataSplit(args, focus) // its errors, or a regular expression
	}
	v := arg(args, 0)
	if v == nil {
		return nil, nil
	}
	str, ok := v.(string)
	if !ok {
		return nil, sigError(splitName, 0)
	}
	limit := -1
	if l, ok, err := numberArg(args, 2, splitName); err != nil {
		return nil, err
	} else if ok {
		if l < 0 {
			return nil, &Error{Code: "D3020", Token: splitName, Message: "Third argument of split function must evaluate to a positive number"}
		}
		limit = int(l)
	}
	out := make([]any, 0, min(len(str)/(len(sep)+1)+1, 1024))
	for len(out) != limit {
		if len(out)%checkEvery == checkEvery-1 && s.ctx != nil {
			if err := s.ctx.Err(); err != nil {
				return nil, err
			}
		}
		if sep == "" {
			if str == "" {
				break
			}
			_, size := utf8.DecodeRuneInString(str)
			out = append(out, str[:size])
			str = str[size:]
			continue
		}
		i := strings.Index(str, sep)
		if i < 0 {
			out = append(out, str)
			break
		}
		out = append(out, str[:i])
		str = str[i+len(sep):]
	}
	return out, nil
}
